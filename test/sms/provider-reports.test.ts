/**
 * Provider reports as an attacker would send them (issue 41 points 2, 3, 4; the secrets' length
 * is held by provider-secrets.test.ts): a report counts only for a message its own gateway sent,
 * on every receipt path, ours included (404, nothing changed); Vonage's signature covers every
 * parameter given, and a receipt whose parameters do not sign unambiguously is refused; an
 * address that keeps failing the check is braked (429), across instances through Redis, and
 * every refusal is counted. Five gateways in one fallback, each a local stand-in (Kannel's
 * sendsms too: Kannel itself is tested in gateway-kannel.test.ts), so each takes one phone.
 */
import assert from 'node:assert/strict';
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { twilioSignature } from '../../src/outbox/gateways/twilio.js';
import { startStandIn } from '../helpers/provider-stand-in.js';
import { authCode, REDIS_URL, SMS_DEFAULTS } from '../helpers/sms-calls.js';
import { closedPort, eventually, startSmsGateway } from '../helpers/sms-gateway.js';
import { sqliteRows } from '../helpers/sqlite-file.js';
import { cleanupTargets } from '../helpers/store-targets.js';
import { startTestServer } from '../helpers/test-server.js';
import type { TestServer } from '../helpers/test-server.js';

after(() => cleanupTargets());

const PATH = '/sms/reports-41';
const PUBLIC = `https://sis.school.example${PATH}`;
const SECRETS = {
  webhook: 'webhook-secret-of-at-least-32-bytes',
  kannel: 'kannel-password-of-at-least-32-bytes',
  twilio: '0123456789abcdef0123456789abcdef',
  vonage: 'vonage-signature-secret-of-32-bytes',
  unifonic: 'unifonic-webhook-token-of-32-bytes',
};
const ACCOUNT = 'AC0123456789abcdef0123456789abcdef';
/** The phone each gateway takes (the others refuse it, as for a while, so the next one is tried). */
const PHONES = {
  unifonic: '+966501000001',
  twilio: '+966501000002',
  vonage: '+966501000003',
  kannel: '+966501000004',
  webhook: '+966501000005',
} as const;
type Name = keyof typeof PHONES;
const NAMES = Object.keys(PHONES) as Name[];

interface Row {
  readonly id: number;
  readonly phone: string;
  readonly gateway: string | null;
  readonly receipt: string | null;
  readonly receipt_reason: string | null;
}

function rows(server: TestServer): Row[] {
  return sqliteRows<Row>(
    server.databaseFile,
    'select id, phone, gateway, receipt, receipt_reason from outbox order by id',
  );
}

interface Answer {
  readonly status: number;
  readonly text: string;
  readonly retryAfter: string | null;
}

async function send(url: string, init: RequestInit = {}): Promise<Answer> {
  const res = await fetch(url, { ...init, signal: AbortSignal.timeout(10_000) });
  return { status: res.status, text: (await res.text()).trimEnd(), retryAfter: res.headers.get('retry-after') };
}

/** Vonage's md5hash signature of `params` as it documents it (`&name=value` sorted, `&` and `=` as `_`). */
function vonageSig(params: ReadonlyMap<string, string> | readonly (readonly [string, string])[]): string {
  const signed = [...params]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `&${k}=${v.replace(/[&=]/g, '_')}`)
    .join('');
  return createHash('md5')
    .update(signed + SECRETS.vonage)
    .digest('hex');
}

describe('reports at every receipt path', { timeout: 180_000 }, () => {
  let server: TestServer;
  let byGateway: Map<string, Row>;
  const closers: (() => Promise<void>)[] = [];
  after(async () => {
    for (const close of closers.reverse()) await close();
  });
  before(async () => {
    const unifonic = await startStandIn((r) =>
      r.params.get('Recipient') === PHONES.unifonic.slice(1)
        ? { status: 200, json: { success: true, data: { MessageID: 'U-41' } } }
        : { status: 200, json: { success: false, errorCode: 'ER-09', message: 'Insufficient balance' } },
    );
    const twilio = await startStandIn((r) =>
      r.params.get('To') === PHONES.twilio
        ? { status: 201, json: { sid: `SM${'4'.repeat(32)}`, status: 'queued' } }
        : { status: 429, json: { code: 20429, message: 'Too Many Requests' } },
    );
    const vonage = await startStandIn((r) => ({
      status: 200,
      json: {
        messages: [
          r.params.get('to') === PHONES.vonage.slice(1)
            ? { status: '0', 'message-id': 'V-41' }
            : { status: '1', 'error-text': 'Throttled' },
        ],
      },
    }));
    const kannel = await startStandIn((r) =>
      r.params.get('to') === PHONES.kannel
        ? { status: 202, text: '0: Accepted for delivery' }
        : { status: 503, text: 'Temporal failure, try again later.' },
    );
    const hook = await startSmsGateway(SECRETS.webhook);
    closers.push(
      () => unifonic.close(),
      () => twilio.close(),
      () => vonage.close(),
      () => kannel.close(),
      () => hook.close(),
    );
    server = await startTestServer({
      env: {
        ...SMS_DEFAULTS,
        SIS_SMS_GATEWAY: 'unifonic,twilio,vonage,kannel,webhook',
        SIS_SMS_UNIFONIC_APP_SID: 'app-sid',
        SIS_SMS_UNIFONIC_WEBHOOK_TOKEN: SECRETS.unifonic,
        SIS_SMS_UNIFONIC_API_URL: unifonic.url,
        SIS_SMS_TWILIO_ACCOUNT_SID: ACCOUNT,
        SIS_SMS_TWILIO_AUTH_TOKEN: SECRETS.twilio,
        SIS_SMS_TWILIO_API_URL: twilio.url,
        SIS_SMS_VONAGE_API_KEY: 'key',
        SIS_SMS_VONAGE_API_SECRET: 'api-secret',
        SIS_SMS_VONAGE_SIGNATURE_SECRET: SECRETS.vonage,
        SIS_SMS_VONAGE_API_URL: vonage.url,
        SIS_SMS_KANNEL_URL: `${kannel.url}/cgi-bin/sendsms`,
        SIS_SMS_KANNEL_USER: 'sis',
        SIS_SMS_KANNEL_PASSWORD: SECRETS.kannel,
        SIS_SMS_WEBHOOK_URL: hook.url,
        SIS_SMS_WEBHOOK_SECRET: SECRETS.webhook,
        SIS_SMS_RECEIPT_PATH: PATH,
        SIS_SMS_CALLBACK_URL: PUBLIC,
        SIS_OUTBOX_POLL_MS: '50',
      },
    });
    closers.push(() => server.close());
    for (const [i, name] of NAMES.entries())
      assert.equal((await authCode(server.url, PHONES[name], `10.41.0.${i + 1}`)).status, 200);
    const sent = await eventually(
      () => {
        const r = rows(server);
        return r.length === NAMES.length && r.every((m) => m.gateway !== null) ? r : undefined;
      },
      60_000,
      'each message taken by its gateway',
    );
    byGateway = new Map(sent.map((m) => [m.gateway!, m]));
    assert.deepEqual(
      // (the phone is masked once the message is handed over)
      NAMES.map((n) => byGateway.get(n)?.phone.slice(-2)),
      NAMES.map((n) => PHONES[n].slice(-2)),
    );
  });

  const providerId: Record<Name, string> = {
    unifonic: 'U-41',
    twilio: `SM${'4'.repeat(32)}`,
    vonage: 'V-41',
    kannel: '',
    webhook: '',
  };

  // Each path's report, valid as its provider makes it, about the message `m`.
  const report = (path: Name, m: Row, extra: Record<string, string | null> = {}): Promise<Answer> => {
    const now = Math.floor(Date.now() / 1000);
    switch (path) {
      case 'webhook': {
        const body = JSON.stringify({ id: String(m.id), status: 'delivered', reason: null, timestamp: now });
        return send(`${server.url}${PATH}`, {
          method: 'POST',
          body,
          headers: {
            'content-type': 'application/json',
            'x-signature-256': `sha256=${createHmac('sha256', SECRETS.webhook).update(body).digest('hex')}`,
          },
        });
      }
      case 'kannel': {
        const t = createHmac('sha256', SECRETS.kannel).update(`kannel:${m.id}`).digest('hex').slice(0, 32);
        return send(`${server.url}${PATH}/kannel?id=${m.id}&t=${t}&type=1&reason=`);
      }
      case 'twilio': {
        const params = new URLSearchParams({
          MessageSid: providerId.twilio,
          MessageStatus: 'delivered',
          AccountSid: ACCOUNT,
        });
        const rest = `/twilio?id=${m.id}`;
        return send(`${server.url}${PATH}${rest}`, {
          method: 'POST',
          body: params.toString(),
          headers: {
            'content-type': 'application/x-www-form-urlencoded',
            'x-twilio-signature': twilioSignature(SECRETS.twilio, `${PUBLIC}${rest}`, params),
          },
        });
      }
      case 'vonage': {
        const params = new Map<string, string>([
          ['msisdn', PHONES.vonage.slice(1)],
          ['messageId', providerId.vonage],
          ['status', 'delivered'],
          ['err-code', '0'],
          ['client-ref', String(m.id)],
          ['timestamp', String(now)],
        ]);
        const signed = new Map(params);
        signed.set('sig', vonageSig(params));
        // A JSON POST, with what `extra` adds (unsigned) or changes.
        const body: Record<string, string | null> = { ...Object.fromEntries(signed), ...extra };
        return send(`${server.url}${PATH}/vonage`, {
          method: 'POST',
          body: JSON.stringify(body),
          headers: { 'content-type': 'application/json' },
        });
      }
      case 'unifonic':
        return send(`${server.url}${PATH}/unifonic?token=${SECRETS.unifonic}`, {
          method: 'POST',
          body: JSON.stringify({ MessageID: providerId[m.gateway as Name] || String(m.id), DLR: 'Delivered' }),
          headers: { 'content-type': 'application/json' },
        });
    }
  };

  it("Vonage's: every parameter given is signed; one that is not one text, or not told apart, is refused", async () => {
    // Vonage: a parameter that is not one signed text is refused before anything is read.
    const v = byGateway.get('vonage')!;
    const ambiguous: [string, Promise<Answer>][] = [
      // (Before issue 41, a key with a null value was dropped unsigned: this one was recorded.)
      ['an unsigned key with a null value', report('vonage', v, { network: null })],
      ['a signed key turned null', report('vonage', v, { 'err-code': null })],
      ['a list', report('vonage', v, { status: ['delivered'] as unknown as string })],
      ['an object', report('vonage', v, { price: { amount: '1' } as unknown as string })],
    ];
    for (const [what, answer] of ambiguous) assert.equal((await answer).status, 400, what);
    // A name twice in one JSON object (JSON.parse keeps the last) and in the query and the body.
    const nowS = String(Math.floor(Date.now() / 1000));
    const base: [string, string][] = [
      ['messageId', 'V-41'],
      ['status', 'delivered'],
      ['client-ref', String(v.id)],
      ['timestamp', nowS],
    ];
    const sig = vonageSig(base);
    const twice = `{"status":"rejected",${base.map(([k, val]) => `${JSON.stringify(k)}:${JSON.stringify(val)}`).join(',')},"sig":"${sig}"}`;
    const dup = await send(`${server.url}${PATH}/vonage`, {
      method: 'POST',
      body: twice,
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(dup.status, 400, dup.text);
    const query = await send(
      `${server.url}${PATH}/vonage?status=rejected&${new URLSearchParams(base).toString()}&sig=${sig}`,
    );
    assert.equal(query.status, 400, query.text);
    // `&` or `=` in a value: Vonage signs it as `_`, so `a=b` and `a_b` would both pass.
    const spoilt: [string, string][] = [...base, ['network-code', '42=01']];
    const eq = await send(
      `${server.url}${PATH}/vonage?${new URLSearchParams([...spoilt, ['sig', vonageSig(spoilt)]]).toString()}`,
    );
    assert.equal(eq.status, 400, eq.text);
    assert.equal(rows(server).find((m) => m.id === v.id)!.receipt, null, 'no ambiguous receipt recorded');
  });

  it('count only for a message their own gateway sent: 404 and nothing changed otherwise, ours included', async () => {
    // Every path refuses every other gateway's message (404) and changes nothing.
    for (const path of NAMES)
      for (const owner of NAMES.filter((n) => n !== path)) {
        const answer = await report(path, byGateway.get(owner)!);
        assert.equal(answer.status, 404, `a ${path} report about ${owner}'s message: ${answer.text}`);
      }
    assert.deepEqual(
      rows(server).map((m) => m.receipt),
      NAMES.map(() => null),
      'no foreign report left a receipt',
    );

    // Its own path: recorded, each.
    for (const name of NAMES) {
      const answer = await report(name, byGateway.get(name)!);
      assert.deepEqual([answer.status, answer.text], [200, 'recorded'], name);
    }
    assert.deepEqual(
      rows(server).map((m) => m.receipt),
      NAMES.map(() => 'delivered'),
    );
  });

  it('brakes an address that keeps failing the check (429 unread for the minute) and counts every refusal', async () => {
    // A guessed token: ten refusals (401) from one address, then its reports are not read (429),
    // the right token included, until the minute ends; another address is still read.
    const guess = (from: string, token: string): Promise<Answer> =>
      send(`${server.url}${PATH}/unifonic?token=${token}`, {
        method: 'POST',
        body: JSON.stringify({ MessageID: 'U-41', DLR: 'Delivered' }),
        headers: { 'content-type': 'application/json', 'x-forwarded-for': from },
      });
    for (let i = 0; i < 10; i++) assert.equal((await guess('198.51.100.41', `guess-${i}`)).status, 401, `guess ${i}`);
    const braked = await guess('198.51.100.41', SECRETS.unifonic);
    assert.equal(braked.status, 429, braked.text);
    assert.ok(Number(braked.retryAfter) > 0 && Number(braked.retryAfter) <= 60, String(braked.retryAfter));
    assert.equal((await guess('198.51.100.42', 'guess-x')).status, 401, 'another address is read');
    assert.equal((await guess('198.51.100.42', SECRETS.unifonic)).status, 409, 'and its right token counts');
    // Our own receipts' path too: a bad signature is a failed report of the webhook.
    const forged = await send(`${server.url}${PATH}`, {
      method: 'POST',
      body: '{}',
      headers: {
        'content-type': 'application/json',
        'x-signature-256': 'sha256=00',
        'x-forwarded-for': '198.51.100.41',
      },
    });
    // Braked per gateway too: the address's reports on another gateway's path are still read.
    assert.equal(forged.status, 401, forged.text);

    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    const count = (labels: string): number => {
      const line = metrics.split('\n').find((l) => l.startsWith(`sis_sms_reports_refused_total{${labels}} `));
      return line === undefined ? 0 : Number(line.split(' ')[1]);
    };
    assert.equal(count('gateway="unifonic",reason="unauthenticated"'), 11);
    assert.equal(count('gateway="unifonic",reason="braked"'), 1);
    assert.equal(count('gateway="webhook",reason="braked"'), 0);
    assert.equal(count('gateway="webhook",reason="unauthenticated"'), 1);
    assert.equal(count('gateway="webhook",reason="not-its-message"'), 4);
    assert.equal(count('gateway="vonage",reason="malformed"'), 7);
  });
});

describe('the report brake with SIS_REDIS_URL', () => {
  it(
    'is shared by the instances: one braked by the failures another saw brakes at its next report',
    { skip: REDIS_URL === '' ? 'SIS_TEST_REDIS_URL not set: Redis tests skipped' : false, timeout: 60_000 },
    async () => {
      const env = {
        ...SMS_DEFAULTS,
        SIS_REDIS_URL: REDIS_URL,
        SIS_SMS_GATEWAY: 'unifonic',
        SIS_SMS_UNIFONIC_APP_SID: 'app-sid',
        SIS_SMS_UNIFONIC_API_URL: `http://127.0.0.1:${await closedPort()}`,
        SIS_SMS_UNIFONIC_WEBHOOK_TOKEN: SECRETS.unifonic,
        SIS_SMS_RECEIPT_PATH: PATH,
      };
      const a = await startTestServer({ env });
      const b = await startTestServer({ env });
      // A client of this run's own (a /64 of its own: clients are counted by their /64), since
      // Redis outlives test runs.
      const from = `2001:db8:${randomBytes(2).toString('hex')}:41::1`;
      const guess = (server: TestServer): Promise<Answer> =>
        send(`${server.url}${PATH}/unifonic?token=guess`, {
          method: 'POST',
          body: '{}',
          headers: { 'content-type': 'application/json', 'x-forwarded-for': from },
        });
      try {
        for (let i = 0; i < 10; i++) assert.equal((await guess(a)).status, 401, `guess ${i} at the first instance`);
        assert.equal((await guess(a)).status, 429);
        // The second instance had seen none of them: the count both share brakes it at once.
        assert.equal((await guess(b)).status, 429, 'braked by the count both instances share');
      } finally {
        await a.close();
        await b.close();
      }
    },
  );
});
