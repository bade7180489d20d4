/**
 * The outbox and dependency metrics the alert rules (deploy/prometheus/) read, from a real
 * service delivering to a real local gateway: attempts by result, the backlog and its oldest
 * message's age, and each dependency's state.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startSmsGateway, eventually } from '../helpers/sms-gateway.js';
import { startTestServer } from '../helpers/test-server.js';

const SECRET = 'test-secret-0123456789-0123456789';
const HOUR_AGO = new Date(Date.now() - 3_600_000);

/** The value of one series in Prometheus text (labels as written, in order), or undefined. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('outbox metrics', () => {
  it('count attempts by result and show the backlog and its oldest message age', async () => {
    const gateway = await startSmsGateway(SECRET, (n) => (n === 0 ? 503 : 200));
    const server = await startTestServer({
      // Codes accepted an hour ago: the oldest pending message's age is known without timing.
      now: () => HOUR_AGO,
      env: {
        SIS_SMS_WEBHOOK_URL: gateway.url,
        SIS_SMS_WEBHOOK_SECRET: SECRET,
        SIS_OUTBOX_POLL_MS: '600000',
        // The failed message waits: still pending when scraped.
        SIS_OUTBOX_BACKOFF_MS: '600000',
      },
    });
    const scrape = async (): Promise<string> => (await fetch(`${server.url}/metrics`)).text();
    try {
      const before = await scrape();
      assert.equal(sample(before, 'sis_outbox_pending_messages'), 0);
      assert.equal(sample(before, 'sis_outbox_oldest_pending_age_seconds'), 0);
      assert.equal(sample(before, 'sis_outbox_deliveries_total{gateway="webhook",result="retry"}'), 0);
      for (const dependency of ['database', 'database_writes', 'redis', 'sms_gateway'])
        assert.equal(sample(before, `sis_dependency_up{dependency="${dependency}"}`), 1, dependency);

      for (const code of ['111111', '222222']) {
        const res = await fetch(`${server.url}/AuthCodeSending.asmx/AuthCode?code=${code}&phone=%2B15550107733`);
        assert.equal(res.status, 200);
        await res.arrayBuffer();
        await eventually(() => (gateway.received.length >= (code === '111111' ? 1 : 2) ? true : undefined));
      }
      await eventually(async () => {
        const text = await scrape();
        return sample(text, 'sis_outbox_deliveries_total{gateway="webhook",result="delivered"}') === 1
          ? text
          : undefined;
      });
      const after = await scrape();
      assert.equal(sample(after, 'sis_outbox_deliveries_total{gateway="webhook",result="retry"}'), 1);
      assert.equal(sample(after, 'sis_outbox_deliveries_total{gateway="webhook",result="failed"}'), 0);
      assert.equal(sample(after, 'sis_outbox_pending_messages'), 1);
      const age = sample(after, 'sis_outbox_oldest_pending_age_seconds');
      assert.ok(age !== undefined && age >= 3600 && age < 7200, `oldest pending age ${age}`);
    } finally {
      await server.close();
      await gateway.close();
    }
  });
});
