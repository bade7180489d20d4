/**
 * Twilio, Vonage and Unifonic (issue 36 points 4, 6, 7), each against a local stand-in that
 * follows the provider's documented request and answers, through a real service: the fallback
 * (SIS_SMS_GATEWAY=unifonic,twilio) tries Twilio only when Unifonic refused, never after a
 * time-out; the gateway that took each message is kept and counted; each provider's delivery
 * report, in its format and checked as it documents (Twilio's X-Twilio-Signature, with its
 * published example; Vonage's signed receipt; Unifonic's webhook and its token), marks the row,
 * and a forged, stale, replayed or malformed one is refused and changes nothing.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, describe, it } from 'node:test';
import { twilioSignature } from '../../src/outbox/gateways/twilio.js';
import { startStandIn } from '../helpers/provider-stand-in.js';
import { authCode, SMS_DEFAULTS } from '../helpers/sms-calls.js';
import { eventually } from '../helpers/sms-gateway.js';
import { sqliteRows, sqliteRun } from '../helpers/sqlite-file.js';
import { cleanupTargets } from '../helpers/store-targets.js';
import { startTestServer } from '../helpers/test-server.js';
import type { TestServer } from '../helpers/test-server.js';

after(() => cleanupTargets());

const PATH = '/sms/reports-7d2a';
/** The URL the providers are given: the service behind a proxy, as a school runs it. */
const PUBLIC = `https://sis.school.example${PATH}`;
/** As Twilio's console shows it: 32 characters. */
const AUTH_TOKEN = '0123456789abcdef0123456789abcdef';
const ACCOUNT = 'AC0123456789abcdef0123456789abcdef';

interface Row {
  readonly id: number;
  readonly phone: string;
  readonly state: string;
  readonly receipt: string | null;
  readonly gateway: string | null;
  readonly last_error: string | null;
}

function rows(server: TestServer): Row[] {
  return sqliteRows(
    server.databaseFile,
    'select id, phone, state, receipt, gateway, last_error from outbox order by id',
  );
}

/** Moves a message's hand-over 73 hours back, its receipt cleared: a report about it now is stale. */
function handedOverLongAgo(server: TestServer, id: number): void {
  sqliteRun(
    server.databaseFile,
    'update outbox set receipt = null, receipt_at = null, delivered_at = ? where id = ?',
    new Date(Date.now() - 73 * 3_600_000).toISOString(),
    id,
  );
}

async function post(
  server: TestServer,
  rest: string,
  body: string,
  headers: Record<string, string>,
): Promise<{ status: number; text: string }> {
  const res = await fetch(`${server.url}${PATH}${rest}`, { method: 'POST', headers, body });
  return { status: res.status, text: (await res.text()).trimEnd() };
}

async function metric(server: TestServer, sample: string): Promise<number | undefined> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${sample} `));
  return line === undefined ? undefined : Number(line.slice(sample.length + 1));
}

describe("Twilio's request signature", () => {
  it("matches Twilio's published example (auth token 12345)", () => {
    const params = new URLSearchParams({
      CallSid: 'CA1234567890ABCDE',
      Caller: '+12349013030',
      Digits: '1234',
      From: '+12349013030',
      To: '+18005551212',
    });
    assert.equal(
      twilioSignature('12345', 'https://mycompany.com/myapp.php?foo=1&bar=2', params),
      '0/KCTR6DLpKmkAf8muzZqo1nDgQ=',
    );
  });
});

describe('Unifonic, then Twilio: the fallback and both providers’ reports', () => {
  it('tries Twilio only when Unifonic refused, records who sent each, and reads both providers’ reports', async () => {
    // Unifonic refuses the first message (its documented error answer), hangs on +966503..., takes the rest.
    const unifonic = await startStandIn((r, n) =>
      n === 0
        ? { status: 200, json: { success: false, message: 'Insufficient balance', errorCode: 'ER-09' } }
        : r.params.get('Recipient') === '966503330003'
          ? { status: 200, json: { success: true, data: { MessageID: 'late' } }, delayMs: 2000 }
          : {
              status: 200,
              json: { success: true, message: '', errorCode: 'ER-00', data: { MessageID: `4100${n}`, Status: 'Sent' } },
            },
    );
    const SEND_U = '/rest/SMS/messages';
    const SEND_T = `/2010-04-01/Accounts/${ACCOUNT}/Messages.json`;
    const twilio = await startStandIn((_r, n) => ({
      status: 201,
      json: { sid: `SM${String(n).padStart(32, '0')}`, status: 'queued' },
    }));
    const server = await startTestServer({
      env: {
        ...SMS_DEFAULTS,
        SIS_SMS_GATEWAY: 'unifonic,twilio',
        SIS_SMS_UNIFONIC_APP_SID: 'unifonic-app-sid',
        SIS_SMS_UNIFONIC_WEBHOOK_TOKEN: 'unifonic-webhook-token-of-32-bytes',
        SIS_SMS_UNIFONIC_API_URL: unifonic.url,
        SIS_SMS_TWILIO_ACCOUNT_SID: ACCOUNT,
        SIS_SMS_TWILIO_AUTH_TOKEN: AUTH_TOKEN,
        SIS_SMS_TWILIO_API_URL: twilio.url,
        SIS_SMS_SENDER_ID: 'SchoolSA',
        SIS_SMS_RECEIPT_PATH: PATH,
        SIS_SMS_CALLBACK_URL: PUBLIC,
        SIS_SMS_WEBHOOK_TIMEOUT_MS: '500',
        SIS_OUTBOX_POLL_MS: '50',
        SIS_OUTBOX_BACKOFF_MS: '100',
      },
    });
    try {
      assert.equal((await authCode(server.url, '+966501110001', '10.7.0.1', '111111')).status, 200);
      await eventually(
        () => (twilio.to(SEND_T).length === 1 ? true : undefined),
        30_000,
        'Twilio taking the refused one',
      );
      assert.equal((await authCode(server.url, '+966502220002', '10.7.0.2', '222222')).status, 200);
      assert.equal((await authCode(server.url, '+966503330003', '10.7.0.3', '333333')).status, 200);
      const [first, second, third] = await eventually(
        () => {
          const r = rows(server);
          return r[1]?.gateway === 'unifonic' &&
            unifonic.to(SEND_U).filter((q) => q.params.get('Recipient') === '966503330003').length >= 2
            ? r
            : undefined;
        },
        30_000,
        'the second delivered and the third tried twice',
      );
      // As each provider documents its request.
      const u = unifonic.to(SEND_U)[0]!;
      assert.deepEqual(
        [
          u.method,
          u.path,
          u.params.get('AppSid'),
          u.params.get('Recipient'),
          u.params.get('SenderID'),
          u.params.get('Body'),
        ],
        ['POST', '/rest/SMS/messages', 'unifonic-app-sid', '966501110001', 'SchoolSA', 'Your code is 111111'],
      );
      const t = twilio.to(SEND_T)[0]!;
      assert.equal(t.path, `/2010-04-01/Accounts/${ACCOUNT}/Messages.json`);
      assert.equal(t.headers.authorization, `Basic ${Buffer.from(`${ACCOUNT}:${AUTH_TOKEN}`).toString('base64')}`);
      assert.deepEqual(
        [t.params.get('To'), t.params.get('From'), t.params.get('Body'), t.params.get('StatusCallback')],
        ['+966501110001', 'SchoolSA', 'Your code is 111111', `${PUBLIC}/twilio?id=${first!.id}`],
      );
      // Who took what: never Twilio after Unifonic took one, or may have (the time-out).
      assert.deepEqual(
        [first!.gateway, second!.gateway, third!.gateway, third!.state],
        ['twilio', 'unifonic', null, 'pending'],
      );
      assert.match(third!.last_error ?? '', /^unifonic: no answer within 500 ms/);
      assert.equal(twilio.to(SEND_T).length, 1, 'Twilio was asked once, for the refused message only');
      assert.equal(await metric(server, 'sis_outbox_deliveries_total{gateway="unifonic",result="fallback"}'), 1);
      assert.equal(await metric(server, 'sis_outbox_deliveries_total{gateway="unifonic",result="delivered"}'), 1);
      assert.equal(await metric(server, 'sis_outbox_deliveries_total{gateway="twilio",result="delivered"}'), 1);

      // Twilio's status callback: form POST to the StatusCallback, signed over the public URL.
      const twilioReport = (id: number, status: string, token = AUTH_TOKEN, extra: Record<string, string> = {}) => {
        const params = new URLSearchParams({
          MessageSid: 'SM00000000000000000000000000000000',
          MessageStatus: status,
          AccountSid: ACCOUNT,
          To: '+966501110001',
          ApiVersion: '2010-04-01',
          ...extra,
        });
        const rest = `/twilio?id=${id}`;
        return post(server, rest, params.toString(), {
          'content-type': 'application/x-www-form-urlencoded',
          'x-twilio-signature': twilioSignature(token, `${PUBLIC}${rest}`, params),
        });
      };
      assert.deepEqual(await twilioReport(first!.id, 'sent'), {
        status: 200,
        text: 'not recorded: status sent is on the way',
      });
      assert.deepEqual(await twilioReport(first!.id, 'undelivered', AUTH_TOKEN, { ErrorCode: '30003' }), {
        status: 200,
        text: 'recorded',
      });
      assert.equal((await twilioReport(first!.id, 'undelivered', AUTH_TOKEN, { ErrorCode: '30003' })).status, 409);
      assert.equal((await twilioReport(first!.id, 'delivered', 'not-the-token')).status, 401);
      assert.equal((await twilioReport(first!.id, 'exploded')).status, 400);
      assert.equal((await twilioReport(second!.id, 'delivered')).status, 404, 'not a message Twilio sent');

      // Unifonic's DLR webhook: JSON with MessageID and DLR, at the URL with its token.
      const unifonicReport = (id: string, dlr: string, token = 'unifonic-webhook-token-of-32-bytes') =>
        post(
          server,
          `/unifonic?token=${token}`,
          JSON.stringify({ MessageID: id, DLR: dlr, Recipient: '966502220002' }),
          {
            'content-type': 'application/json',
          },
        );
      const secondId = unifonic.to(SEND_U).findIndex((q) => q.params.get('Recipient') === '966502220002');
      const messageId = `4100${secondId}`;
      assert.equal((await unifonicReport(messageId, 'Delivered', 'guessed')).status, 401);
      assert.equal((await unifonicReport(messageId, 'Maybe')).status, 400);
      assert.deepEqual(await unifonicReport(messageId, 'Delivered'), { status: 200, text: 'recorded' });
      assert.equal((await unifonicReport(messageId, 'Undeliverable')).status, 409);
      assert.equal((await unifonicReport('999999', 'Delivered')).status, 404);

      const marked = rows(server);
      assert.deepEqual(
        marked.map((r) => [r.gateway, r.receipt]),
        [
          ['twilio', 'undelivered'],
          ['unifonic', 'delivered'],
          [null, null],
        ],
      );
      assert.equal(await metric(server, 'sis_sms_delivery_total{status="undelivered"}'), 1);
      assert.equal(await metric(server, 'sis_sms_delivery_total{status="delivered"}'), 1);

      // Stale: reports about messages handed over more than 72 hours ago change nothing.
      handedOverLongAgo(server, first!.id);
      handedOverLongAgo(server, second!.id);
      for (const stale of [await twilioReport(first!.id, 'delivered'), await unifonicReport(messageId, 'Delivered')]) {
        assert.equal(stale.status, 410, stale.text);
        assert.match(stale.text, /^stale: /);
      }
      assert.deepEqual(
        rows(server).map((r) => r.receipt),
        [null, null, null],
      );
    } finally {
      await server.close();
      await unifonic.close();
      await twilio.close();
    }
  });
});

describe('Vonage', () => {
  it('sends Arabic as unicode with our id as client-ref; reads its signed receipts, refusing bad ones', async () => {
    const vonage = await startStandIn(() => ({
      status: 200,
      json: { 'message-count': '1', messages: [{ to: '966501234567', 'message-id': '0A0000001234ABCD', status: '0' }] },
    }));
    const secret = 'vonage-signature-secret-32-bytes!';
    const server = await startTestServer({
      env: {
        ...SMS_DEFAULTS,
        SIS_SMS_GATEWAY: 'vonage',
        SIS_SMS_VONAGE_API_KEY: 'abcd1234',
        SIS_SMS_VONAGE_API_SECRET: 'vonage-api-secret',
        SIS_SMS_VONAGE_SIGNATURE_SECRET: secret,
        SIS_SMS_VONAGE_API_URL: vonage.url,
        SIS_SMS_TEMPLATE: 'رمز التحقق: {code}',
        SIS_SMS_RECEIPT_PATH: PATH,
        SIS_SMS_CALLBACK_URL: PUBLIC,
        SIS_OUTBOX_POLL_MS: '50',
      },
    });
    try {
      assert.equal((await authCode(server.url, '+966501234567', '10.7.1.1', '654321')).status, 200);
      const [row] = await eventually(
        () => {
          const r = rows(server);
          return r[0]?.gateway === 'vonage' ? r : undefined;
        },
        30_000,
        'the message sent',
      );
      const v = vonage.to('/sms/json')[0]!;
      assert.deepEqual(
        ['api_key', 'to', 'type', 'client-ref', 'callback', 'status-report-req', 'text'].map((k) => v.params.get(k)),
        ['abcd1234', '966501234567', 'unicode', String(row!.id), `${PUBLIC}/vonage`, '1', 'رمز التحقق: 654321'],
      );
      // A receipt as Vonage signs it (md5hash, the dashboard's default): GET with the parameters.
      const receipt = (status: string, timestamp: number, key = secret, drop?: string) => {
        const params = new Map<string, string>([
          ['msisdn', '966501234567'],
          ['to', 'SIS'],
          ['network-code', '42001'],
          ['messageId', '0A0000001234ABCD'],
          ['status', status],
          ['err-code', status === 'delivered' ? '0' : '5'],
          ['client-ref', String(row!.id)],
          ['message-timestamp', '2026-11-27 12:00:00'],
          ['timestamp', String(timestamp)],
          ['nonce', 'a1b2c3d4'],
        ]);
        if (drop !== undefined) params.delete(drop);
        const signed = [...params.keys()]
          .sort()
          .map((k) => `&${k}=${params.get(k)!.replace(/[&=]/g, '_')}`)
          .join('');
        params.set(
          'sig',
          createHash('md5')
            .update(signed + key)
            .digest('hex'),
        );
        return fetch(`${server.url}${PATH}/vonage?${new URLSearchParams([...params]).toString()}`).then(
          async (res) => ({
            status: res.status,
            text: (await res.text()).trimEnd(),
          }),
        );
      };
      const now = Math.floor(Date.now() / 1000);
      assert.equal((await receipt('delivered', now, 'not-the-secret')).status, 401);
      const stale = await receipt('delivered', now - 600);
      assert.equal(stale.status, 410, 'genuine, stale: not a failure (401)');
      assert.match(stale.text, /^stale timestamp/);
      assert.equal((await receipt('delivered', now, secret, 'client-ref')).status, 400);
      assert.deepEqual(await receipt('accepted', now), {
        status: 200,
        text: 'not recorded: status accepted is on the way',
      });
      assert.deepEqual(await receipt('expired', now), { status: 200, text: 'recorded' });
      assert.equal((await receipt('expired', now)).status, 409, 'the same receipt again');
      const [marked] = rows(server);
      assert.equal(marked!.receipt, 'undelivered');
    } finally {
      await server.close();
      await vonage.close();
    }
  });
});
