/**
 * The operation of every request is the one ASMX would run, for the shadow's modes: SOAP 1.1 by
 * its SOAPAction, SOAP 1.2 by its `action` or else the body's first element (the interface
 * document's own shape: no action at all), HTTP GET and POST by the path. For each of the five
 * operations, over the four bindings and SOAP 1.2 without `action` (the binding loop's clients and
 * cases), `SIS_SHADOW=legacy,<Op>=off` answers every request of <Op> ourselves, as the binding loop
 * expects, and sends none of them to the legacy service (the replaying one); another operation's
 * request still goes to the legacy service.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { operations } from '../../src/operations/index.js';
import { bindingClients, soap12WithoutAction } from '../helpers/binding-clients.js';
import { CONTRACT_CASES, CONTRACT_DATASET } from '../helpers/contract-cases.js';
import { startLegacyReplay } from '../helpers/legacy-replay.js';
import type { LegacyReplay } from '../helpers/legacy-replay.js';
import { rawRequest } from '../helpers/raw-http.js';
import { startTestServer } from '../helpers/test-server.js';

const clients = [
  ...bindingClients.map((c) => ({ label: c.name, client: c })),
  { label: 'soap12 without action', client: soap12WithoutAction },
];

describe('SIS_SHADOW=legacy,<Op>=off: every request of <Op> is ours, over every binding', () => {
  let legacy: LegacyReplay;
  after(() => legacy?.close());

  for (const op of operations) {
    it(`${op.name}: answered here over ${clients.map((c) => c.label).join(', ')}; none sent to the legacy`, async () => {
      legacy ??= await startLegacyReplay();
      const server = await startTestServer({
        dataset: CONTRACT_DATASET,
        env: { SIS_SHADOW: `legacy,${op.name}=off`, SIS_LEGACY_URL: legacy.url, SIS_SHADOW_TIMEOUT_MS: '2000' },
      });
      const before = legacy.received.length;
      try {
        const c = CONTRACT_CASES[op.name]![0]!;
        for (const { label, client } of clients) {
          const args = typeof c.args === 'function' ? c.args(client.name) : c.args;
          // AuthCode's code told apart per client: the two SOAP 1.2 shapes are one binding.
          const own = op.name === 'AuthCode' ? { ...args, code: `c-${label.replace(/ /g, '-')}` } : args;
          const { res, value } = await client.call(server.url, op, own);
          assert.equal(res.status, 200, `${label}: ${res.body.toString()}`);
          if (op.result.kind !== 'void') assert.deepEqual(value, c.expected, label);
        }
        assert.deepEqual(legacy.received.slice(before), [], `nothing of ${op.name} reached the legacy service`);
        // The shadow is on: a request of another operation still goes to the legacy service.
        const other = op.name === 'GetTokenDevice' ? 'GetServerKeyAndSender' : 'GetTokenDevice';
        const path =
          other === 'GetTokenDevice'
            ? '/PushNotificationMobile.asmx/GetTokenDevice?id=1'
            : '/PushNotificationMobile.asmx/GetServerKeyAndSender';
        await rawRequest(server.url, { method: 'GET', path });
        assert.equal(legacy.received.length, before + 1, `${other} went to the legacy service`);
      } finally {
        await server.close();
      }
    });
  }
});
