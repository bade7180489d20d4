/**
 * AuthCode through the service, over all four bindings: arguments checked (a client fault, or
 * GET/POST's 500 text, with a message saying what is wrong, and nothing stored), the phone stored
 * in its normal form with its message queued, the hourly limit per phone, delivery started at
 * once rather than at the next poll, and codes and phones kept out of every log line, a failing
 * gateway's included. Also the settings that go with it.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../src/config/config.js';
import { operations } from '../../src/operations/index.js';
import type { Operation } from '../../src/operations/index.js';
import { bindingClients } from '../helpers/binding-clients.js';
import type { BindingClient } from '../helpers/binding-clients.js';
import { configProblems } from '../helpers/config-problems.js';
import type { RawResponse } from '../helpers/raw-http.js';
import { eventually, startSmsGateway } from '../helpers/sms-gateway.js';
import { sqliteRows } from '../helpers/sqlite-file.js';
import { startTestServer } from '../helpers/test-server.js';
import type { TestServer } from '../helpers/test-server.js';

const AuthCode: Operation = operations.find((o) => o.name === 'AuthCode')!;
const SECRET = 'gateway-secret-for-tests-32-bytes-long';

function rows(server: TestServer, sql: string): Record<string, unknown>[] {
  return sqliteRows(server.databaseFile, sql);
}

/** The message a refused call carries: the fault string, or GET/POST's text. */
function refusal(client: BindingClient, res: RawResponse): string {
  assert.equal(res.status, 500);
  const body = res.body.toString('utf8');
  if (client.name === 'soap11') {
    assert.match(body, /<faultcode>soap:Client<\/faultcode>/);
    return /<faultstring>([^<]*)<\/faultstring>/.exec(body)![1]!;
  }
  if (client.name === 'soap12') {
    assert.match(body, /<soap:Value>soap:Sender<\/soap:Value>/);
    return /<soap:Text xml:lang="en">([^<]*)<\/soap:Text>/.exec(body)![1]!;
  }
  assert.equal(res.headers.get('content-type'), 'text/plain; charset=utf-8');
  assert.ok(body.endsWith('\r\n'));
  return body.slice(0, -2);
}

for (const client of bindingClients) {
  describe(`AuthCode over ${client.name}`, () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer({ env: { SIS_AUTH_CODES_PER_HOUR: '2' } });
    });
    after(() => server.close());

    it('refuses a malformed phone or code with a message that says what is expected, storing nothing', async () => {
      const cases: [Record<string, string | null>, RegExp][] = [
        [
          { code: '1234', phone: '+1-555-0100 <ext. 7>' },
          /^Invalid phone: expected an optional \+ followed by 7 to 15 digits \(spaces and dashes are ignored\)\.$/,
        ],
        [{ code: '1234', phone: '12345' }, /^Invalid phone/],
        [{ code: '1234', phone: '+1234567890123456' }, /^Invalid phone/],
        [{ code: '1234', phone: null }, /^Missing phone/],
        [{ code: '', phone: '+15550100200' }, /^Invalid code: expected 1 to 32 printable characters\.$/],
        [{ code: 'x'.repeat(33), phone: '+15550100200' }, /^Invalid code/],
        [{ code: 'a\tb', phone: '+15550100200' }, /^Invalid code/],
        [{ code: null, phone: '+15550100200' }, /^Missing code/],
      ];
      for (const [args, message] of cases) {
        // GET/POST send a missing argument as absent too: ASMX then fails to bind it, which is its own error.
        if (client.name.startsWith('http') && Object.values(args).includes(null)) continue;
        const { res } = await client.call(server.url, AuthCode, args);
        assert.match(refusal(client, res), message, JSON.stringify(args));
      }
      assert.deepEqual(rows(server, 'select * from auth_codes'), []);
      assert.deepEqual(rows(server, 'select * from outbox'), []);
    });

    it('stores the phone without spaces and dashes and queues the message; the third code of the hour is refused', async () => {
      const phone = '+44 20-7946 0958';
      for (const code of ['first', 'second'])
        assert.equal((await client.call(server.url, AuthCode, { code, phone })).res.status, 200);
      assert.deepEqual(rows(server, 'select code, phone from auth_codes order by id'), [
        { code: 'first', phone: '+442079460958' },
        { code: 'second', phone: '+442079460958' },
      ]);
      assert.deepEqual(rows(server, 'select code, phone, message, state from outbox order by id'), [
        { code: 'first', phone: '+442079460958', message: 'Your code is first', state: 'pending' },
        { code: 'second', phone: '+442079460958', message: 'Your code is second', state: 'pending' },
      ]);
      const { res } = await client.call(server.url, AuthCode, { code: 'third', phone: '+442079460958' });
      assert.equal(refusal(client, res), 'Too many codes for this phone: at most 2 an hour. Try again in 60 minutes.');
      assert.equal(rows(server, 'select * from outbox').length, 2);
    });
  });
}

describe('AuthCode delivery and logs', () => {
  const logs: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, cb) {
      logs.push(chunk.toString());
      cb();
    },
  });

  it('sends an accepted code at once (not at the next poll) and logs neither code nor phone, retries included', async () => {
    const gateway = await startSmsGateway(SECRET, (n) => (n === 0 ? 503 : 200));
    const server = await startTestServer({
      logDestination: destination,
      env: {
        LOG_LEVEL: 'trace',
        SIS_SMS_WEBHOOK_URL: gateway.url,
        SIS_SMS_WEBHOOK_SECRET: SECRET,
        SIS_SMS_MESSAGE: 'Code: {code}. Do not share {code}.',
        // Only a wake-up can explain a delivery within the test's time.
        SIS_OUTBOX_POLL_MS: '600000',
        SIS_OUTBOX_BACKOFF_MS: '1',
      },
    });
    try {
      const soap = bindingClients[0]!;
      const get = bindingClients[2]!;
      assert.equal(
        (await soap.call(server.url, AuthCode, { code: 'QX7731Z', phone: '+1 555 0107 733' })).res.status,
        200,
      );
      assert.equal((await get.call(server.url, AuthCode, { code: 'WV9920K', phone: '+15550107744' })).res.status, 200);
      assert.equal(
        (await get.call(server.url, AuthCode, { code: 'bad\u0001code', phone: '+15550107755' })).res.status,
        500,
      );
      const seen = await gateway.delivered(2);
      assert.deepEqual(seen.map((s) => s.code).sort(), ['QX7731Z', 'WV9920K']);
      assert.ok(seen.every((s) => s.signed));
      assert.equal(seen.find((s) => s.code === 'QX7731Z')!.message, 'Code: QX7731Z. Do not share QX7731Z.');
      // 503 to the first request: the worker retried (and logged it) before the second request arrived.
      await eventually(() =>
        rows(server, "select * from outbox where state = 'delivered'").length === 2 ? true : undefined,
      );
      assert.ok(
        logs.some((l) => l.includes('outbox: will retry')),
        'the failed attempt is logged',
      );
      assert.ok(logs.some((l) => l.includes('outbox: delivered')));
    } finally {
      await server.close();
      await gateway.close();
    }
    const all = logs.join('');
    for (const secret of [
      'QX7731Z',
      'WV9920K',
      'bad\\u0001code',
      'bad\u0001code',
      '5550107733',
      '0107 733',
      '5550107744',
      '5550107755',
      SECRET,
    ]) {
      assert.ok(!all.includes(secret), `${JSON.stringify(secret)} does not appear in the logs`);
    }
  });

  it('without a gateway: one info line at start, and codes wait as pending', async () => {
    const lines: string[] = [];
    const server = await startTestServer({
      env: { LOG_LEVEL: 'info' },
      logDestination: new Writable({
        write(chunk: Buffer, _enc, cb) {
          lines.push(chunk.toString());
          cb();
        },
      }),
    });
    try {
      const notes = lines.filter((l) => l.includes('SMS gateway'));
      assert.equal(notes.length, 1);
      assert.match(notes[0]!, /"level":30.*no SMS gateway configured \(SIS_SMS_GATEWAY and its settings\)/);
      assert.equal(
        (await bindingClients[0]!.call(server.url, AuthCode, { code: '1', phone: '5550100' })).res.status,
        200,
      );
      await new Promise((r) => setTimeout(r, 100));
      assert.deepEqual(rows(server, 'select state, attempts from outbox'), [{ state: 'pending', attempts: 0 }]);
    } finally {
      await server.close();
    }
  });
});

describe('AuthCode settings', () => {
  const problems = configProblems;

  it('defaults: five codes an hour, the default message, no gateway, eight attempts', () => {
    const config = loadConfig({});
    assert.equal(config.authCodesPerHour, 5);
    assert.equal(config.smsMessage, 'Your code is {code}');
    assert.equal(config.smsWebhook, null);
    assert.deepEqual(config.outbox, { pollMs: 1000, maxAttempts: 8, backoffMs: 1000, leaseMs: 30_000 });
    assert.equal(config.results, 'documented');
  });

  it("a gateway needs its secret, of at least 32 bytes (the receipts' too); neither a secret nor the URL is echoed", () => {
    const secret = 's3cret-s3cret-s3cret-s3cret-s3cret';
    assert.deepEqual(problems({ SIS_SMS_WEBHOOK_URL: 'https://user:pw@sms.example/hook' }), [
      'SIS_SMS_WEBHOOK_SECRET: required when SIS_SMS_WEBHOOK_URL is set (it signs every message)',
    ]);
    assert.deepEqual(problems({ SIS_SMS_WEBHOOK_SECRET: secret }), [
      'SIS_SMS_WEBHOOK_SECRET: set, but SIS_SMS_WEBHOOK_URL is not; set both or neither',
    ]);
    const wrong = problems({ SIS_SMS_WEBHOOK_URL: 'ftp://user:pw@sms.example/', SIS_SMS_WEBHOOK_SECRET: secret });
    assert.deepEqual(wrong, ['SIS_SMS_WEBHOOK_URL: expected an absolute http:// or https:// URL']);
    const hook = { SIS_SMS_WEBHOOK_URL: 'https://sms.example/hook', SIS_SMS_RECEIPT_PATH: '/sms/receipts' };
    const short = problems({ ...hook, SIS_SMS_WEBHOOK_SECRET: 's3cret', SIS_SMS_RECEIPT_SECRET: 'x'.repeat(31) });
    assert.deepEqual(short, [
      'SIS_SMS_RECEIPT_SECRET: 31 bytes, expected at least 32 (a random key, such as the output of openssl rand -hex 32)',
      'SIS_SMS_WEBHOOK_SECRET: 6 bytes, expected at least 32 (a random key, such as the output of openssl rand -hex 32)',
    ]);
    assert.ok(!short.join('\n').includes('s3cret'), 'no secret echoed');
    assert.deepEqual(
      problems({
        SIS_SMS_WEBHOOK_URL: hook.SIS_SMS_WEBHOOK_URL,
        SIS_SMS_WEBHOOK_SECRET: secret,
        SIS_SMS_RECEIPT_SECRET: 'r'.repeat(32),
      }),
      ['SIS_SMS_RECEIPT_SECRET: set, but SIS_SMS_RECEIPT_PATH is not; set both or neither'],
    );
    const ok = loadConfig({
      SIS_SMS_WEBHOOK_URL: 'https://sms.example/hook',
      SIS_SMS_WEBHOOK_SECRET: secret,
      SIS_SMS_WEBHOOK_TIMEOUT_MS: '2000',
    });
    assert.deepEqual(ok.smsWebhook, {
      url: 'https://sms.example/hook',
      secret,
      timeoutMs: 2000,
      receiptPath: null,
      receiptSecret: secret,
    });
    const own = loadConfig({ ...hook, SIS_SMS_WEBHOOK_SECRET: secret, SIS_SMS_RECEIPT_SECRET: 'r'.repeat(32) });
    assert.equal(own.smsWebhook?.receiptSecret, 'r'.repeat(32));
  });

  it('the template: placeholders checked, its former name read, each named gateway needs its settings (issue 36)', () => {
    assert.deepEqual(problems({ SIS_SMS_TEMPLATE: 'Your code is {cod}' }), [
      'SIS_SMS_TEMPLATE="Your code is {cod}": {cod} is not a placeholder: expected {code} where the code goes, and no other',
    ]);
    assert.equal(loadConfig({ SIS_SMS_MESSAGE: 'Code: {code}' }).smsMessage, 'Code: {code}');
    assert.deepEqual(problems({ SIS_SMS_MESSAGE: 'Code: {code}', SIS_SMS_TEMPLATE: 'رمز: {code}' }), [
      'SIS_SMS_MESSAGE: the former name of SIS_SMS_TEMPLATE; set only SIS_SMS_TEMPLATE',
    ]);
    assert.deepEqual(problems({ SIS_SMS_GATEWAY: 'unifonic,twilio', SIS_SMS_TWILIO_ACCOUNT_SID: 'AC1' }), [
      'SIS_SMS_TWILIO_AUTH_TOKEN: required when SIS_SMS_GATEWAY names twilio',
      'SIS_SMS_UNIFONIC_APP_SID: required when SIS_SMS_GATEWAY names unifonic',
    ]);
    assert.deepEqual(problems({ SIS_SMS_GATEWAY: 'twilio,sms77' }), [
      'SIS_SMS_GATEWAY="twilio,sms77": "sms77": expected webhook, kannel, smpp, twilio, vonage, unifonic',
    ]);
    assert.deepEqual(
      problems({
        SIS_SMS_GATEWAY: 'kannel',
        SIS_SMS_KANNEL_URL: 'kannel:13013',
        SIS_SMS_KANNEL_USER: 'u',
        SIS_SMS_KANNEL_PASSWORD: 'p',
      }),
      ['SIS_SMS_KANNEL_URL: expected an absolute http:// or https:// URL'],
    );
    assert.deepEqual(problems({ SIS_SMS_SENDER_ID: 'A sender far too long' }), [
      'SIS_SMS_SENDER_ID="A sender far too long": expected an alphanumeric sender id of at most 11 characters, or a phone number',
    ]);
    const gateways = loadConfig({
      SIS_SMS_GATEWAY: 'smpp',
      SIS_SMS_SMPP_URL: 'smpp://smsc.example:2775',
      SIS_SMS_SMPP_SYSTEM_ID: 's',
      SIS_SMS_SMPP_PASSWORD: 'p',
    }).smsGateways;
    assert.deepEqual([gateways.names, gateways.smpp?.bind, gateways.smpp?.window], [['smpp'], 'transceiver', 10]);
  });

  it('a message without {code}, a lease shorter than the gateway time-out and wrong numbers are refused', () => {
    assert.deepEqual(problems({ SIS_SMS_MESSAGE: 'Your code' }), [
      'SIS_SMS_MESSAGE="Your code": expected a text with {code} where the code goes',
    ]);
    assert.match(
      problems({
        SIS_SMS_WEBHOOK_URL: 'http://127.0.0.1:9/x',
        SIS_SMS_WEBHOOK_SECRET: 's'.repeat(32),
        SIS_OUTBOX_LEASE_MS: '5000',
        SIS_SMS_WEBHOOK_TIMEOUT_MS: '5000',
      })[0]!,
      /^SIS_OUTBOX_LEASE_MS=5000: expected more than SIS_SMS_WEBHOOK_TIMEOUT_MS \(5000\)/,
    );
    assert.deepEqual(problems({ SIS_AUTH_CODES_PER_HOUR: '-1', SIS_OUTBOX_MAX_ATTEMPTS: '0', SIS_RESULTS: 'all' }), [
      'SIS_RESULTS="all": expected one of documented, extended',
      'SIS_AUTH_CODES_PER_HOUR="-1": expected a whole number from 0 to 1000000',
      'SIS_OUTBOX_MAX_ATTEMPTS="0": expected a whole number from 1 to 100',
    ]);
  });
});
