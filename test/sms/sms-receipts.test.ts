/**
 * Delivery receipts (issue 28 point 6), on SQLite and PostgreSQL, two instances on one database:
 * the gateway's signed receipts, posted to either instance, mark each message delivered, failed
 * or undelivered with its reason; `sis outbox list` shows them, `sis outbox stats` the delivery
 * rates per country and per range (the range whose messages never arrive first), /metrics
 * sis_sms_delivery_total{status}. A forged, stale, replayed, malformed or unknown receipt is
 * refused and changes nothing.
 */
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { Writable } from 'node:stream';
import { after, describe, it } from 'node:test';
import { runSis } from '../helpers/serve-process.js';
import { authCode, backends, SMS_DEFAULTS } from '../helpers/sms-calls.js';
import { startSmsGateway } from '../helpers/sms-gateway.js';
import { cleanupTargets } from '../helpers/store-targets.js';
import { startTestServer } from '../helpers/test-server.js';
import type { TestServer } from '../helpers/test-server.js';

after(() => cleanupTargets());

const SECRET = 'receipt-test-secret-of-32-bytes-or-more';
const PATH = '/gateway/receipts-7f3a';

interface Receipt {
  readonly id: string | number;
  readonly status: string;
  readonly reason?: string;
  readonly timestamp: number;
}

const nowSeconds = (): number => Math.floor(Date.now() / 1000);

async function post(
  server: TestServer,
  body: string,
  sign: string = SECRET,
): Promise<{ status: number; text: string }> {
  const res = await fetch(`${server.url}${PATH}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-signature-256': `sha256=${createHmac('sha256', sign).update(body).digest('hex')}`,
    },
    body,
  });
  return { status: res.status, text: (await res.text()).trimEnd() };
}

const receipt = (r: Receipt): string => JSON.stringify(r);

async function deliveries(servers: readonly TestServer[]): Promise<Record<string, number>> {
  const total = new Map<string, number>();
  for (const s of servers) {
    const text = await (await fetch(`${s.url}/metrics`)).text();
    for (const m of text.matchAll(/^sis_sms_delivery_total\{status="([^"]+)"\} (\d+)$/gm))
      total.set(m[1]!, (total.get(m[1]!) ?? 0) + Number(m[2]));
  }
  return Object.fromEntries(total);
}

// Receipts live in the database: the counters' home (Redis or not) plays no part.
for (const backend of backends.filter((b) => !b.name.includes('Redis'))) {
  describe(`delivery receipts on ${backend.name}, two instances`, { skip: backend.skip ?? false }, () => {
    it('records signed receipts and shows delivery rates; refuses forged, stale, replayed and malformed ones', async () => {
      const { db, env } = await backend.fresh();
      const gateway = await startSmsGateway(SECRET);
      const servers: TestServer[] = [];
      try {
        for (let i = 0; i < 2; i++)
          servers.push(
            await startTestServer({
              env: {
                ...SMS_DEFAULTS,
                ...env,
                SIS_SMS_WEBHOOK_URL: gateway.url,
                SIS_SMS_WEBHOOK_SECRET: SECRET,
                SIS_SMS_RECEIPT_PATH: PATH,
                SIS_OUTBOX_POLL_MS: '50',
              },
            }),
          );
        // Four codes to one range the messages reach, four to a range they never reach, two abroad
        // (on the real clock: the outbox sends what is due by it).
        const phones = [
          ...Array.from({ length: 4 }, (_, i) => `+96650111000${i}`),
          ...Array.from({ length: 4 }, (_, i) => `+96655999000${i}`),
          '+971501234567',
          '+971521234567',
        ];
        for (const [i, phone] of phones.entries())
          assert.equal((await authCode(servers[i % 2]!.url, phone, `10.6.0.${i}`)).status, 200);
        const sent = await gateway.delivered(phones.length);
        const idOf = new Map(sent.map((m) => [m.phone, m.messageId!]));
        const answers: number[] = [];
        const bodies: string[] = [];
        for (const [i, phone] of phones.entries()) {
          const lost = phone.startsWith('+96655999');
          const body = receipt({
            id: idOf.get(phone)!,
            status: lost ? 'undelivered' : i === 9 ? 'failed' : 'delivered',
            ...(lost ? { reason: 'absent subscriber\n(code 27)' } : {}),
            timestamp: nowSeconds(),
          });
          bodies.push(body);
          answers.push((await post(servers[i % 2]!, body)).status);
        }
        assert.deepEqual(answers, Array<number>(phones.length).fill(200));

        // Refused, each with what was wrong; none changes a row.
        const first = idOf.get(phones[0]!)!;
        const later = receipt({ id: first, status: 'undelivered', timestamp: nowSeconds() + 1 });
        assert.deepEqual(await post(servers[0]!, later, 'not-the-secret'), {
          status: 401,
          text: 'bad signature: expected X-Signature-256: sha256=<hex HMAC-SHA256 of the body>',
        });
        const stale = await post(
          servers[1]!,
          receipt({ id: first, status: 'undelivered', timestamp: nowSeconds() - 600 }),
        );
        assert.equal(stale.status, 410);
        assert.match(stale.text, /^stale timestamp/);
        assert.equal(
          (await post(servers[0]!, bodies[1]!)).status,
          409,
          'the same receipt again, at the other instance',
        );
        const older = receipt({ id: idOf.get(phones[2]!)!, status: 'undelivered', timestamp: nowSeconds() - 60 });
        assert.equal((await post(servers[0]!, older)).status, 409, 'a receipt older than the one recorded');
        assert.equal(
          (await post(servers[0]!, receipt({ id: 999_999, status: 'delivered', timestamp: nowSeconds() }))).status,
          404,
        );
        assert.equal((await post(servers[0]!, '{"id": 1, "status": "read"}')).status, 400);
        assert.equal((await post(servers[0]!, 'not json')).status, 400);
        assert.equal((await fetch(`${servers[0]!.url}${PATH}`)).status, 405);

        assert.deepEqual(await deliveries(servers), { delivered: 5, undelivered: 4, failed: 1 });
      } finally {
        for (const s of servers) await s.close();
        await gateway.close();
      }
      const rows = await db.sql('select receipt, receipt_reason, phone_range from outbox order by id');
      assert.deepEqual(
        rows.map((r) => [r.phone_range, r.receipt, r.receipt_reason]),
        [
          ...Array.from({ length: 4 }, () => ['+96650111', 'delivered', null]),
          ...Array.from({ length: 4 }, () => ['+96655999', 'undelivered', 'absent subscriber (code 27)']),
          ['+97150123', 'delivered', null],
          ['+97152123', 'failed', null],
        ],
      );
      const stats = await runSis(['outbox', 'stats'], db.url);
      assert.equal(stats.code, 0, stats.stderr);
      assert.match(stats.stdout, /^delivery_hour:SA\t50% of 8$/m);
      assert.match(stats.stdout, /^delivery_day:AE\t50% of 2$/m);
      // The range whose messages never arrive comes first among the ranges.
      const ranges = [...stats.stdout.matchAll(/^delivery_hour:(\+\d+)\t(.*)$/gm)].map((m) => [m[1], m[2]]);
      assert.deepEqual(ranges[0], ['+96655999', '0% of 4']);
      const list = await runSis(['outbox', 'list', '--limit', '3'], db.url);
      assert.match(list.stdout, /^id\tstate\t.*\treceipt\treceipt_reason\tgateway\trefusal$/m);
      assert.match(list.stdout, /\tfailed\t\twebhook\t$/m);
    });
  });
}

describe('delivery receipts: their own secret, and a timestamp that is no date (issue 33 point 5)', () => {
  it('checks receipts with SIS_SMS_RECEIPT_SECRET, not the webhook’s, and answers a timestamp beyond any date 400', async () => {
    const { env } = await backends[0]!.fresh();
    const RECEIPT_SECRET = 'the-receipts-own-secret-0123456789abcdef';
    const lines: string[] = [];
    const server = await startTestServer({
      env: {
        ...SMS_DEFAULTS,
        ...env,
        LOG_LEVEL: 'warn',
        SIS_SMS_WEBHOOK_URL: 'http://127.0.0.1:9/never',
        SIS_SMS_WEBHOOK_SECRET: SECRET,
        SIS_SMS_RECEIPT_PATH: PATH,
        SIS_SMS_RECEIPT_SECRET: RECEIPT_SECRET,
      },
      logDestination: new Writable({
        write(chunk: Buffer, _enc, cb) {
          lines.push(chunk.toString());
          cb();
        },
      }),
    });
    try {
      const unknown = receipt({ id: 999_999, status: 'delivered', timestamp: nowSeconds() });
      assert.equal((await post(server, unknown)).status, 401, "the webhook's secret no longer signs receipts");
      assert.equal(
        (await post(server, unknown, RECEIPT_SECRET)).status,
        404,
        'signed right: read, and no such message',
      );
      // A whole number of seconds, but past the last date a clock can hold (8.64e12 s): not a receipt.
      const never = receipt({ id: 999_999, status: 'delivered', timestamp: 8_640_000_000_001 });
      assert.deepEqual(await post(server, never, RECEIPT_SECRET), {
        status: 400,
        text: 'timestamp: expected Unix seconds (a whole number)',
      });
      assert.ok(!lines.some((l) => /"level":50/.test(l)), `no error line: ${lines.join('')}`);
    } finally {
      await server.close();
    }
  });
});
