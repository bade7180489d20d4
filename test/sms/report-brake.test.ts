/**
 * The report brake as an attacker, and as a provider, would meet it (issue 46 points 2, 3, 4):
 * a thousand forged reports at once from one client get no more than ten answered 401 in the
 * minute, the rest 429, in memory and through Redis (two instances sharing one count); the
 * clients of one IPv6 /48 together get a larger allowance, not one per /64; genuine reports
 * (stale, replayed) are answered as such and never counted, so a provider's next fresh report
 * is recorded. Over real HTTP, against our own receipts' path (the webhook gateway's).
 */
import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { authCode, REDIS_URL, SMS_DEFAULTS } from '../helpers/sms-calls.js';
import { eventually, startSmsGateway } from '../helpers/sms-gateway.js';
import type { SmsGateway } from '../helpers/sms-gateway.js';
import { sqliteRows } from '../helpers/sqlite-file.js';
import { cleanupTargets } from '../helpers/store-targets.js';
import { startTestServer } from '../helpers/test-server.js';
import type { TestServer } from '../helpers/test-server.js';

after(() => cleanupTargets());

/** What docs/security.md promises: failures a minute per client and gateway, and per IPv6 /48. */
const FAILURES = 10;
const SITE_FAILURES = 50;
const SECRET = 'report-brake-secret-of-at-least-32-bytes';
const PATH = '/sms/receipts-46';

interface Answer {
  readonly status: number;
  readonly text: string;
}

/** One receipt at our path, from `from` (X-Forwarded-For: the test server trusts loopback), signed with `key`. */
async function receipt(server: TestServer, from: string, body: string, key = SECRET): Promise<Answer> {
  const res = await fetch(`${server.url}${PATH}`, {
    method: 'POST',
    body,
    headers: {
      'content-type': 'application/json',
      'x-forwarded-for': from,
      'x-signature-256': `sha256=${createHmac('sha256', key).update(body).digest('hex')}`,
    },
    signal: AbortSignal.timeout(120_000),
  });
  return { status: res.status, text: (await res.text()).trimEnd() };
}

const forged = (server: TestServer, from: string, i: number): Promise<Answer> =>
  receipt(server, from, JSON.stringify({ id: '1', status: 'delivered', timestamp: i }), `guess-${i}`);

/** How many answers had each status. */
function tally(answers: readonly Answer[]): Record<number, number> {
  const out: Record<number, number> = {};
  for (const a of answers) out[a.status] = (out[a.status] ?? 0) + 1;
  return out;
}

/**
 * A thousand forged reports from one client at once, spread over `servers`: every one answered
 * 401 or 429, and no more 401s than the windows they took allow (one window, unless a machine so
 * loaded that they took over a minute let a second open).
 */
async function flood(servers: readonly TestServer[], from: string): Promise<void> {
  const started = Date.now();
  const counts = tally(
    await Promise.all(Array.from({ length: 1000 }, (_, i) => forged(servers[i % servers.length]!, from, i))),
  );
  const windows = 1 + Math.floor((Date.now() - started) / 60_000);
  assert.equal((counts[401] ?? 0) + (counts[429] ?? 0), 1000, JSON.stringify(counts));
  assert.ok(
    counts[401]! >= FAILURES && counts[401]! <= FAILURES * windows,
    `${JSON.stringify(counts)} in ${windows} window(s)`,
  );
}

const ENV = {
  ...SMS_DEFAULTS,
  SIS_SMS_WEBHOOK_SECRET: SECRET,
  SIS_SMS_RECEIPT_PATH: PATH,
  SIS_OUTBOX_POLL_MS: '50',
};

describe('the report brake in memory', { timeout: 240_000 }, () => {
  let gateway: SmsGateway;
  let server: TestServer;
  before(async () => {
    gateway = await startSmsGateway(SECRET);
    server = await startTestServer({ env: { ...ENV, SIS_SMS_WEBHOOK_URL: gateway.url } });
  });
  after(async () => {
    await server?.close();
    await gateway?.close();
  });

  it('answers at most ten of a thousand forged reports sent at once 401, the rest 429', async () => {
    await flood([server], '198.51.100.46');
  });

  it("counts an IPv6 client's /48 beside its /64, with a larger allowance", async () => {
    // Six /64s of one /48, nine failures each (under each /64's ten): the /48 allows fifty.
    const answers: Answer[] = [];
    for (let net = 0; net < 6; net++)
      for (let i = 0; i < FAILURES - 1; i++) answers.push(await forged(server, `2001:db8:4646:${net}::1`, i));
    assert.deepEqual(tally(answers), { 401: SITE_FAILURES, 429: 6 * (FAILURES - 1) - SITE_FAILURES });
    assert.equal((await forged(server, '2001:db8:4647:1::1', 0)).status, 401, 'another /48 is read');
  });

  it('never counts a genuine report: stale or replayed, it is told so, and the next fresh one is recorded', async () => {
    assert.equal((await authCode(server.url, '+966501000046', '10.46.0.1')).status, 200);
    const [row] = await eventually(
      () => {
        const r = sqliteRows<{ id: number; state: string }>(server.databaseFile, 'select id, state from outbox');
        return r.length === 1 && r[0]!.state === 'delivered' ? r : undefined;
      },
      60_000,
      'the message handed to the gateway',
    );
    const provider = '203.0.113.46';
    const now = Math.floor(Date.now() / 1000);
    const body = (status: string, timestamp: number): string => JSON.stringify({ id: row!.id, status, timestamp });
    // Ten correctly signed reports ten minutes old: genuine, stale (410), not failures.
    for (let i = 0; i < 10; i++) {
      const stale = await receipt(server, provider, body('delivered', now - 600 - i));
      assert.equal(stale.status, 410, stale.text);
      assert.match(stale.text, /^stale timestamp/);
    }
    // One recorded, then sent ten times again: replayed (409), not failures either.
    assert.deepEqual(await receipt(server, provider, body('delivered', now)), { status: 200, text: 'recorded' });
    for (let i = 0; i < 10; i++) {
      const replayed = await receipt(server, provider, body('delivered', now));
      assert.equal(replayed.status, 409, replayed.text);
    }
    // The provider's next fresh report gets its normal answer.
    assert.deepEqual(await receipt(server, provider, body('undelivered', now + 1)), {
      status: 200,
      text: 'recorded',
    });
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    assert.match(metrics, /^sis_sms_reports_refused_total\{gateway="webhook",reason="stale"\} 10$/m);
    assert.match(metrics, /^sis_sms_reports_refused_total\{gateway="webhook",reason="replayed"\} 10$/m);
  });
});

describe('the report brake with SIS_REDIS_URL', { timeout: 240_000 }, () => {
  it(
    'answers at most ten of a thousand forged reports at once 401 over two instances, the rest 429',
    { skip: REDIS_URL === '' ? 'SIS_TEST_REDIS_URL not set: Redis tests skipped' : false },
    async () => {
      const env = { ...ENV, SIS_REDIS_URL: REDIS_URL, SIS_SMS_WEBHOOK_URL: 'http://127.0.0.1:9/sms' };
      const a = await startTestServer({ env });
      const b = await startTestServer({ env });
      try {
        // A client (and /48) of this run's own, since Redis outlives test runs.
        await flood([a, b], `2001:db8:${randomBytes(2).toString('hex')}:46::1`);
      } finally {
        await a.close();
        await b.close();
      }
    },
  );
});
