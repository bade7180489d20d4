/**
 * One request, one label: a SOAP 1.2 envelope sent as text/xml without a SOAPAction header is
 * SOAP 1.2 for ASMX's routing (its first guess, bindings/soap.ts), and the shadow asks the same
 * route rather than guessing from the content type. In compare mode, the read that is compared and
 * the write that is never sent on (AuthCode, counted skipped) carry the same binding in /metrics,
 * in the access log and in `sis shadow report --json`.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, describe, it } from 'node:test';
import { startLegacyReplay } from '../helpers/legacy-replay.js';
import { rawRequest } from '../helpers/raw-http.js';
import { databaseUrlOf, startShadowed, shadowCli } from '../helpers/shadow-run.js';
import { cleanupTargets } from '../helpers/store-targets.js';

after(cleanupTargets);

const envelope12 = (call: string): string =>
  '<?xml version="1.0" encoding="utf-8"?><soap12:Envelope xmlns:soap12="http://www.w3.org/2003/05/soap-envelope">' +
  `<soap12:Body>${call}</soap12:Body></soap12:Envelope>`;

const REQUESTS = [
  {
    service: 'PushNotificationMobile',
    operation: 'GetTokenDevice',
    body: envelope12('<GetTokenDevice xmlns="http://tempuri.org/"><id>1</id></GetTokenDevice>'),
  },
  {
    service: 'AuthCodeSending',
    operation: 'AuthCode',
    body: envelope12('<AuthCode xmlns="http://tempuri.org/"><code>1234</code><phone>not a phone</phone></AuthCode>'),
  },
];

async function shadowReport(databaseUrl: string): Promise<{ groups: Record<string, unknown>[] }> {
  const { code, out, err } = await shadowCli(['report', '--json'], { SIS_DATABASE_URL: databaseUrl });
  assert.equal(code, 0, err);
  return JSON.parse(out) as { groups: Record<string, unknown>[] };
}

describe('a text/xml request without SOAPAction, in compare mode', () => {
  it('has one binding in /metrics, the access log and the shadow report', async () => {
    const legacy = await startLegacyReplay();
    const logged: Record<string, unknown>[] = [];
    const log = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString().split('\n'))
          if (line !== '') logged.push(JSON.parse(line) as Record<string, unknown>);
        done();
      },
    });
    const server = await startShadowed(
      { SIS_SHADOW: 'compare', SIS_LEGACY_URL: legacy.url, LOG_LEVEL: 'info' },
      undefined,
      log,
    );
    try {
      for (const r of REQUESTS) {
        const res = await rawRequest(server.url, {
          method: 'POST',
          path: `/${r.service}.asmx`,
          headers: [['Content-Type', 'text/xml; charset=utf-8']],
          body: r.body,
        });
        assert.ok(res.body.toString('utf8').includes('http://www.w3.org/2003/05/soap-envelope'), 'answered in 1.2');
      }
      const metrics = (await rawRequest(server.url, { method: 'GET', path: '/metrics' })).body.toString('utf8');
      await server.app.close();
      const report = await shadowReport(databaseUrlOf(server));

      for (const r of REQUESTS) {
        const counted = [...metrics.matchAll(/^sis_requests_total\{([^}]*)\} (\d+)$/gm)]
          .map((m) => m[1]!)
          .filter(
            (labels) => labels.includes(`service="${r.service}"`) && labels.includes(`operation="${r.operation}"`),
          )
          .map((labels) => /binding="([^"]*)"/.exec(labels)![1]);
        const lines = logged
          .filter((l) => l['msg'] === 'request' && l['service'] === r.service)
          .map((l) => l['binding']);
        const groups = report.groups.filter((g) => g['service'] === r.service).map((g) => g['binding']);
        assert.deepEqual(
          { metrics: counted, log: lines, report: groups },
          { metrics: ['soap12'], log: ['soap12'], report: ['soap12'] },
          r.operation,
        );
      }
      const results = new Map(report.groups.map((g) => [g['service'], g['result']]));
      assert.equal(results.get('AuthCodeSending'), 'skipped', 'a write is never sent on');
      // The read, and once more as it differs (the replay has no capture of it): never the write.
      assert.equal(legacy.received.length, 2, 'only the read reached the legacy service');
    } finally {
      await server.close();
      await legacy.close();
    }
  });
});
