/**
 * The Kannel gateway for real (issue 36 point 2): Debian's bearerbox and smsbox, kannel-extras'
 * fakesmsc as the carrier, started here. AuthCode's code reaches fakesmsc through smsbox's
 * sendsms (an Arabic template as UCS-2, the sender id), Kannel's delivery report comes back to
 * the dlr-url and marks the row delivered; a number Kannel does not route is refused for good
 * with Kannel's words, at once, not retried; a forged, replayed, stale or malformed report is refused and changes nothing.
 */
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { after, describe, it } from 'node:test';
import { kannelGateway } from '../../src/outbox/gateways/kannel.js';
import { KANNEL_SKIP, startKannel } from '../helpers/kannel.js';
import { authCode, SMS_DEFAULTS } from '../helpers/sms-calls.js';
import { closedPort, eventually } from '../helpers/sms-gateway.js';
import { sqliteRows, sqliteRun } from '../helpers/sqlite-file.js';
import { cleanupTargets } from '../helpers/store-targets.js';
import { startTestServer } from '../helpers/test-server.js';

after(() => cleanupTargets());

const PATH = '/sms/reports-5c1e';

interface Row {
  readonly id: number;
  readonly state: string;
  readonly receipt: string | null;
  readonly receipt_reason: string | null;
  readonly gateway: string | null;
  readonly last_error: string | null;
  readonly attempts: number;
}

/** The outbox as the database holds it, oldest first. */
function rows(file: string): Row[] {
  return sqliteRows(
    file,
    'select id, state, receipt, receipt_reason, gateway, last_error, attempts from outbox order by id',
  );
}

/** fakesmsc's URL-encoded bytes (+ a space) as the UTF-16BE text they are. */
function ucs2(encoded: string): string {
  const bytes: number[] = [];
  for (let i = 0; i < encoded.length; i++) {
    if (encoded[i] === '%') {
      bytes.push(parseInt(encoded.slice(i + 1, i + 3), 16));
      i += 2;
    } else bytes.push(encoded[i] === '+' ? 0x20 : encoded.charCodeAt(i));
  }
  return Buffer.from(bytes).swap16().toString('utf16le');
}
const TEMPLATE = 'رمز الدخول: {code}';

describe("the Kannel gateway against Debian's Kannel and its fake SMSC", { skip: KANNEL_SKIP ?? false }, () => {
  it('sends the code to fakesmsc, records its delivery report, refuses what Kannel does not route and bad reports', async () => {
    const kannel = await startKannel('+96655');
    const port = await closedPort();
    const server = await startTestServer({
      env: {
        ...SMS_DEFAULTS,
        PORT: String(port),
        SIS_SMS_GATEWAY: 'kannel',
        SIS_SMS_KANNEL_URL: kannel.sendsmsUrl,
        SIS_SMS_KANNEL_USER: kannel.user,
        SIS_SMS_KANNEL_PASSWORD: kannel.password,
        SIS_SMS_SENDER_ID: 'SchoolSA',
        SIS_SMS_TEMPLATE: TEMPLATE,
        SIS_SMS_RECEIPT_PATH: PATH,
        SIS_SMS_CALLBACK_URL: `http://127.0.0.1:${port}${PATH}`,
        SIS_OUTBOX_POLL_MS: '50',
      },
    });
    try {
      assert.equal((await authCode(server.url, '+966501234567', '10.9.0.1', '482913')).status, 200);
      // fakesmsc prints it as UCS-2, its text URL-encoded (UTF-16BE), from the sender id to the phone.
      const line = await eventually(
        () => kannel.carrierLines().find((l) => l.includes('+966501234567')),
        30_000,
        'the message reaching fakesmsc',
      );
      const m = /<SchoolSA \+966501234567 ucs-2 (\S+)>/.exec(line);
      assert.ok(m !== null, line);
      assert.equal(ucs2(m[1]!), TEMPLATE.replace('{code}', '482913'));

      // Kannel's report came back to the dlr-url: the row says delivered, by kannel.
      const row = await eventually(
        () => rows(server.databaseFile).find((r) => r.receipt === 'delivered'),
        30_000,
        'the delivery report',
      );
      assert.equal(row.gateway, 'kannel');
      assert.equal(row.state, 'delivered');

      // A range the SMSC does not route: Kannel refuses for good, its words kept, the message failed
      // at its first attempt (of SIS_OUTBOX_MAX_ATTEMPTS' 8), not tried again.
      assert.equal((await authCode(server.url, '+966551234567', '10.9.0.2')).status, 200);
      const refused = await eventually(
        () => rows(server.databaseFile).find((r) => r.state === 'failed'),
        30_000,
        'the refusal',
      );
      assert.equal(refused.last_error, 'number refused: kannel answered 403: Not routable. Do not try again.');
      assert.equal(refused.attempts, 1);
      assert.equal(kannel.carrierLines().filter((l) => l.includes('+966551234567')).length, 0);

      // Reports as Kannel makes them, refused when they are not its own.
      const token = (id: number): string =>
        createHmac('sha256', kannel.password).update(`kannel:${id}`).digest('hex').slice(0, 32);
      const report = async (query: string): Promise<{ status: number; text: string }> => {
        const res = await fetch(`${server.url}${PATH}/kannel?${query}`);
        return { status: res.status, text: (await res.text()).trimEnd() };
      };
      const before = rows(server.databaseFile);
      assert.deepEqual(await report(`id=${row.id}&t=${token(row.id)}&type=1&reason=`), {
        status: 409,
        text: `message ${row.id} already holds a receipt as new`,
      });
      // (Kannel may report the refused message itself meanwhile, as failed: its own report is let be.)
      assert.equal((await report(`id=${refused.id}&t=${token(row.id)}&type=2&reason=forged`)).status, 401);
      assert.equal((await report(`id=${refused.id}&t=${token(refused.id)}&type=x`)).status, 400);
      assert.equal((await report(`id=${row.id}&t=${token(row.id)}`)).status, 400);
      // Stale: a report about a message handed over more than 72 hours ago.
      sqliteRun(
        server.databaseFile,
        'update outbox set receipt = null, receipt_at = null, delivered_at = ? where id = ?',
        new Date(Date.now() - 73 * 3_600_000).toISOString(),
        row.id,
      );
      const stale = await report(`id=${row.id}&t=${token(row.id)}&type=2&reason=late`);
      assert.equal(stale.status, 410);
      assert.match(stale.text, /^stale: /);
      const after = rows(server.databaseFile);
      assert.deepEqual(
        after.filter((m) => m.id !== refused.id).map((m) => [m.id, m.receipt]),
        before.filter((m) => m.id !== refused.id).map((m) => [m.id, m.id === row.id ? null : m.receipt]),
      );
      assert.ok(
        after.every((m) => m.receipt_reason !== 'forged' && m.receipt_reason !== 'late'),
        'no refused report left its reason',
      );
      const refusedNow = after.find((m) => m.id === refused.id)!;
      assert.ok(refusedNow.receipt === null || refusedNow.receipt === 'failed', String(refusedNow.receipt));
    } finally {
      await server.close();
      await kannel.stop();
    }
  });
});

describe("Kannel's report types", () => {
  it('delivered, failed, rejected by the SMSC; buffered and accepted are on the way', () => {
    const gateway = kannelGateway(
      { url: 'http://k/cgi-bin/sendsms', user: 'u', password: 'p', smsc: null },
      null,
      'https://s/r',
      1000,
    );
    const t = createHmac('sha256', 'p').update('kannel:7').digest('hex').slice(0, 32);
    const read = (type: string) =>
      gateway.readCallback!(
        {
          method: 'GET',
          url: `/r/kannel?id=7&t=${t}&type=${type}&reason=NACK%2F0x0b`,
          headers: {},
          body: Buffer.alloc(0),
        },
        new Date(),
      );
    assert.deepEqual(read('1'), { message: { id: 7 }, status: 'delivered', reason: 'NACK/0x0b', at: null });
    assert.deepEqual(read('2'), { message: { id: 7 }, status: 'undelivered', reason: 'NACK/0x0b', at: null });
    assert.deepEqual(read('16'), { message: { id: 7 }, status: 'failed', reason: 'NACK/0x0b', at: null });
    assert.deepEqual(read('4'), { ignore: 'report type 4 is on the way' });
    assert.deepEqual(read('8'), { ignore: 'report type 8 is on the way' });
  });
});
