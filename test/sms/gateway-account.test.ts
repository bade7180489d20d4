/**
 * A gateway refusing the account, not the number (issue 46 point 6), through a real service and a
 * stand-in Vonage over HTTP: its status 15 (a sender id it does not allow) for every message makes
 * the SMS gateway "refusing" at the first answer (the log line naming the gateway and the account,
 * sis_dependency_up{dependency="sms_gateway"} 0, sis_sms_gateway_account_refused{gateway} 1); the
 * codes wait, tried again beyond SIS_OUTBOX_MAX_ATTEMPTS, and go out once the account is fixed;
 * `sis outbox list` tells them (refusal `account`) from a number refused for good (`number`).
 * Each gateway's account codes are held in gateway-refusals.test.ts.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { logCollector } from '../helpers/log-collector.js';
import { startStandIn } from '../helpers/provider-stand-in.js';
import { runSis } from '../helpers/serve-process.js';
import { authCode, SMS_DEFAULTS } from '../helpers/sms-calls.js';
import { eventually } from '../helpers/sms-gateway.js';
import { sqliteRows } from '../helpers/sqlite-file.js';
import { cleanupTargets } from '../helpers/store-targets.js';
import { startTestServer } from '../helpers/test-server.js';

after(() => cleanupTargets());

/** Two parents' phones, then one Vonage refuses for good (status 6: an invalid number). */
const PARENTS = ['+966500000461', '+966500000462'];
const BAD_NUMBER = '+966500000469';

interface Row {
  readonly phone: string;
  readonly state: string;
  readonly attempts: number;
  readonly last_error: string | null;
}

async function metric(url: string, line: RegExp): Promise<string | undefined> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return line.exec(text)?.[1];
}

describe('a gateway refusing the account, not the number', { timeout: 120_000 }, () => {
  it('raises the refusing state, its metric and line at once; the codes wait and go out once the account is fixed', async () => {
    let fixed = false;
    const vonage = await startStandIn((r) => ({
      status: 200,
      json: {
        messages: [
          r.params.get('to') === BAD_NUMBER.slice(1)
            ? { status: '6', 'error-text': 'Invalid Message' }
            : fixed
              ? { status: '0', 'message-id': `V-${r.params.get('client-ref') ?? ''}` }
              : { status: '15', 'error-text': 'Illegal Sender Address - rejected' },
        ],
      },
    }));
    const log = logCollector();
    const server = await startTestServer({
      logDestination: log.stream,
      env: {
        ...SMS_DEFAULTS,
        LOG_LEVEL: 'info',
        SIS_SMS_GATEWAY: 'vonage',
        SIS_SMS_VONAGE_API_KEY: 'key',
        SIS_SMS_VONAGE_API_SECRET: 'api-secret',
        SIS_SMS_VONAGE_API_URL: vonage.url,
        SIS_SMS_SENDER_ID: 'NOT-ALLOWED',
        SIS_OUTBOX_POLL_MS: '50',
        SIS_OUTBOX_BACKOFF_MS: '100',
        SIS_OUTBOX_MAX_ATTEMPTS: '2',
      },
    });
    const rows = (): Row[] =>
      sqliteRows<Row>(server.databaseFile, 'select phone, state, attempts, last_error from outbox order by id');
    try {
      for (const [i, phone] of [...PARENTS, BAD_NUMBER].entries())
        assert.equal((await authCode(server.url, phone, `10.46.6.${i + 1}`)).status, 200);
      // Tried again beyond SIS_OUTBOX_MAX_ATTEMPTS (2): a refused account is no reason to give a code up.
      const waiting = await eventually(
        () => {
          const r = rows();
          return r.length === 3 && r.slice(0, 2).every((m) => m.attempts >= 3) && r[2]!.state === 'failed'
            ? r
            : undefined;
        },
        60_000,
        "the parents' codes tried three times, the bad number's failed",
      );
      for (const m of waiting.slice(0, 2)) {
        assert.equal(m.state, 'pending', 'waiting for the account, not failed');
        assert.equal(m.last_error, 'account refused: vonage status 15: Illegal Sender Address - rejected');
      }
      assert.deepEqual(
        [waiting[2]!.attempts, waiting[2]!.last_error],
        [1, 'number refused: vonage status 6: Invalid Message'],
      );

      // Loud: the state, its metric and the gateway's own gauge (the alert's), and one line naming the account.
      assert.equal(await metric(server.url, /^sis_dependency_up\{dependency="sms_gateway"\} (\d+)$/m), '0');
      assert.equal(await metric(server.url, /^sis_sms_gateway_account_refused\{gateway="vonage"\} (\d+)$/m), '1');
      const lines = log.lines.filter((l) => String(l['msg']).startsWith('SMS gateway refusing messages'));
      assert.equal(lines.length, 1, JSON.stringify(lines));
      assert.match(String(lines[0]!['msg']), /vonage refuses the account or its configuration, not the number/);
      assert.match(String(lines[0]!['reason']), /vonage status 15/);

      // `sis outbox list` tells the refused account from the refused number.
      const list = await runSis(['outbox', 'list'], `sqlite:${server.databaseFile}`);
      assert.equal(list.code, 0, list.stderr);
      const refusal = new Map(
        list.stdout
          .trim()
          .split('\n')
          .slice(1)
          .map((l) => l.split('\t'))
          .map((f) => [f[3]!.slice(-2), f.at(-1)!]),
      );
      assert.deepEqual(Object.fromEntries(refusal), { '61': 'account', '62': 'account', '69': 'number' });

      // The operator fixes the account: the waiting codes go out, and the state ends.
      fixed = true;
      await eventually(
        () =>
          rows()
            .slice(0, 2)
            .every((m) => m.state === 'delivered')
            ? true
            : undefined,
        30_000,
        "the parents' codes delivered",
      );
      assert.equal(await metric(server.url, /^sis_sms_gateway_account_refused\{gateway="vonage"\} (\d+)$/m), '0');
      await eventually(
        async () =>
          (await metric(server.url, /^sis_dependency_up\{dependency="sms_gateway"\} (\d+)$/m)) === '1'
            ? true
            : undefined,
        10_000,
        'the SMS gateway back',
      );
    } finally {
      await server.close();
      await vonage.close();
    }
  });
});
