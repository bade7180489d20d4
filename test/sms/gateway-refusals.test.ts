/**
 * Permanent refusals are not retried (issue 41 point 5): each gateway tells a refusal for good
 * (an invalid or unroutable number, in its provider's words) from one for a while (throttled, out
 * of credit, in trouble), against local stand-ins that answer as each provider documents, and an
 * SMSC (node-smpp's server side) for SMPP. Through a real service: a message every gateway tried
 * refused for good is failed at once, with their words; the next gateway of the fallback is still
 * tried after a refusal for good (another provider may route the number), and a refusal for a
 * while leaves the message to be tried again. Kannel's own "Not routable. Do not try again." is
 * held against Kannel itself in gateway-kannel.test.ts. A refusal of the account or configuration
 * (issue 46 point 6) is told from both: here each gateway's codes, in gateway-account.test.ts
 * what the outbox does with it.
 */
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, describe, it } from 'node:test';
import { createServer } from 'smpp';
import type { Pdu, Session } from 'smpp';
import { GatewayError } from '../../src/outbox/gateways/gateway.js';
import type { Gateway, OutboundSms } from '../../src/outbox/gateways/gateway.js';
import { kannelGateway } from '../../src/outbox/gateways/kannel.js';
import { smppGateway } from '../../src/outbox/gateways/smpp.js';
import { twilioGateway } from '../../src/outbox/gateways/twilio.js';
import { unifonicGateway } from '../../src/outbox/gateways/unifonic.js';
import { vonageGateway } from '../../src/outbox/gateways/vonage.js';
import { webhookGateway } from '../../src/outbox/gateways/webhook-gateway.js';
import { startStandIn } from '../helpers/provider-stand-in.js';
import { authCode, SMS_DEFAULTS } from '../helpers/sms-calls.js';
import { eventually, startSmsGateway } from '../helpers/sms-gateway.js';
import { sqliteRows } from '../helpers/sqlite-file.js';
import { cleanupTargets } from '../helpers/store-targets.js';
import { startTestServer } from '../helpers/test-server.js';

after(() => cleanupTargets());

const ACCOUNT = 'AC0123456789abcdef0123456789abcdef';
const FOR_GOOD = '+966500000001';
const FOR_A_WHILE = '+966500000002';

/** A message to `phone`, as the outbox hands it to a gateway. */
function message(phone: string): OutboundSms {
  const now = new Date();
  return {
    id: 1,
    phone,
    code: '123456',
    message: 'Your code is 123456',
    state: 'pending',
    attempts: 1,
    nextAttemptAt: now,
    lastError: null,
    createdAt: now,
    deliveredAt: null,
    receipt: null,
    receiptReason: null,
    traceparent: null,
    gateway: null,
  };
}

/** What the gateway's refusal of `phone` was: its kind and words. */
async function refusal(gateway: Gateway, phone: string): Promise<[string, string]> {
  try {
    await gateway.send(message(phone));
  } catch (err) {
    assert.ok(err instanceof GatewayError, String(err));
    return [err.kind, err.message];
  }
  throw new Error(`${gateway.name} took the message to ${phone}`);
}

/** An SMSC answering submit_sm with `status(destination)` as command_status. */
async function startSmsc(status: (to: string) => number) {
  const sessions = new Set<Session>();
  const server = createServer((session) => {
    sessions.add(session);
    session.on('error', () => undefined);
    session.on('close', () => sessions.delete(session));
    session.on('bind_transceiver', (pdu: Pdu) => session.send(pdu.response()));
    session.on('enquire_link', (pdu: Pdu) => session.send(pdu.response()));
    session.on('unbind', (pdu: Pdu) => session.send(pdu.response()));
    session.on('submit_sm', (pdu: Pdu) =>
      session.send(pdu.response({ command_status: status(pdu.destination_addr ?? '') })),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `smpp://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      for (const s of sessions) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('each gateway tells a refusal for good from one for a while', { timeout: 60_000 }, () => {
  it("Kannel: smsbox's 403 Not routable, or a number its lists deny, is for good; a temporal failure is not", async () => {
    const kannel = await startStandIn((r) =>
      r.params.get('to') === FOR_GOOD
        ? { status: 403, text: 'Not routable. Do not try again.' }
        : r.params.get('to') === '+966500000003'
          ? { status: 403, text: 'Number(s) has/have been denied by white- and/or black-lists.' }
          : { status: 503, text: 'Temporal failure, try again later.' },
    );
    try {
      const g = kannelGateway({ url: kannel.url, user: 'u', password: 'p', smsc: null }, null, null, 5000);
      assert.deepEqual(await refusal(g, FOR_GOOD), [
        'permanent',
        'kannel answered 403: Not routable. Do not try again.',
      ]);
      assert.equal((await refusal(g, '+966500000003'))[0], 'permanent');
      assert.deepEqual(await refusal(g, FOR_A_WHILE), [
        'refused',
        'kannel answered 503: Temporal failure, try again later.',
      ]);
    } finally {
      await kannel.close();
    }
  });

  it("Twilio: an invalid, unreachable or unsubscribed number is for good; 'too many requests' is not", async () => {
    const twilio = await startStandIn((r) =>
      r.params.get('To') === FOR_GOOD
        ? { status: 400, json: { code: 21211, message: "The 'To' number +966500000001 is not a valid phone number." } }
        : { status: 429, json: { code: 20429, message: 'Too Many Requests' } },
    );
    try {
      const g = twilioGateway({ accountSid: ACCOUNT, authToken: 't'.repeat(32), apiUrl: twilio.url }, null, null, 5000);
      assert.deepEqual(await refusal(g, FOR_GOOD), [
        'permanent',
        "twilio answered 400: 21211 The 'To' number +966500000001 is not a valid phone number.",
      ]);
      assert.deepEqual(await refusal(g, FOR_A_WHILE), ['refused', 'twilio answered 429: 20429 Too Many Requests']);
    } finally {
      await twilio.close();
    }
  });

  it('Vonage: status 3, 6, 7… is for good; 1 (throttled) is not', async () => {
    const codes = new Map([
      ['966500000001', '6'],
      ['966500000003', '7'],
      ['966500000004', '5'],
    ]);
    const vonage = await startStandIn((r) => ({
      status: 200,
      json: { messages: [{ status: codes.get(r.params.get('to') ?? '') ?? '1', 'error-text': 'as Vonage says' }] },
    }));
    try {
      const g = vonageGateway(
        {
          apiKey: 'k',
          apiSecret: 's',
          signatureSecret: null,
          signatureMethod: 'md5hash',
          apiUrl: vonage.url,
        },
        null,
        null,
        5000,
      );
      assert.deepEqual(await refusal(g, FOR_GOOD), ['permanent', 'vonage status 6: as Vonage says']);
      assert.equal((await refusal(g, '+966500000003'))[0], 'permanent');
      assert.equal((await refusal(g, '+966500000004'))[0], 'refused');
      assert.deepEqual(await refusal(g, FOR_A_WHILE), ['refused', 'vonage status 1: as Vonage says']);
    } finally {
      await vonage.close();
    }
  });

  it('Unifonic: an invalid destination number (482, or 483 as the HTTP status) is for good; 429 is not', async () => {
    const unifonic = await startStandIn((r) =>
      r.params.get('Recipient') === FOR_GOOD.slice(1)
        ? { status: 200, json: { success: false, errorCode: '482', message: 'Invalid dest num' } }
        : r.params.get('Recipient') === '966500000003'
          ? { status: 483, json: { success: false, message: 'Operator is not found' } }
          : { status: 429, json: { success: false, message: 'Too many requests generated by this user' } },
    );
    try {
      const g = unifonicGateway({ appSid: 'a', webhookToken: null, apiUrl: unifonic.url }, null, 5000);
      assert.deepEqual(await refusal(g, FOR_GOOD), ['permanent', 'unifonic 482: Invalid dest num']);
      assert.equal((await refusal(g, '+966500000003'))[0], 'permanent');
      assert.equal((await refusal(g, FOR_A_WHILE))[0], 'refused');
    } finally {
      await unifonic.close();
    }
  });

  it('SMPP: ESME_RINVDSTADR (0x0B) is for good; ESME_RTHROTTLED (0x58) and ESME_RMSGQFUL (0x14) are not', async () => {
    const smsc = await startSmsc((to) => (to === FOR_GOOD.slice(1) ? 0x0b : to === FOR_A_WHILE.slice(1) ? 0x58 : 0x14));
    const g = smppGateway(
      { url: smsc.url, systemId: 'sis', password: 'secret', bind: 'transceiver', window: 1 },
      null,
      5000,
    );
    try {
      assert.deepEqual(await refusal(g, FOR_GOOD), ['permanent', 'smpp: submit_sm refused (command_status 0xb)']);
      assert.equal((await refusal(g, FOR_A_WHILE))[0], 'refused');
      assert.equal((await refusal(g, '+966500000003'))[0], 'refused');
    } finally {
      await g.close?.();
      await smsc.close();
    }
  });
});

describe("each gateway tells a refusal of the account or configuration from a number's", { timeout: 60_000 }, () => {
  /** The kind of each refusal of `gateway`, by phone. */
  const kinds = async (gateway: Gateway, phones: readonly string[]): Promise<string[]> => {
    const out: string[] = [];
    for (const phone of phones) out.push((await refusal(gateway, phone))[0]);
    return out;
  };
  const phones = (n: number): string[] =>
    Array.from({ length: n }, (_, i) => `+9665000001${String(i).padStart(2, '0')}`);

  it('Vonage: 2, 4, 8, 9, 12, 15 (sender), 29 (demo account)… are the account; 6 is the number', async () => {
    const statuses = ['15', '29', '9', '4', '12', '6', '1'];
    const byPhone = new Map(phones(statuses.length).map((p, i) => [p.slice(1), statuses[i]!]));
    const vonage = await startStandIn((r) => ({
      status: 200,
      json: { messages: [{ status: byPhone.get(r.params.get('to') ?? ''), 'error-text': 'as Vonage says' }] },
    }));
    const g = vonageGateway(
      { apiKey: 'k', apiSecret: 's', signatureSecret: null, signatureMethod: 'md5hash', apiUrl: vonage.url },
      'SCHOOL',
      null,
      5000,
    );
    try {
      assert.deepEqual(await kinds(g, phones(statuses.length)), [
        'account',
        'account',
        'account',
        'account',
        'account',
        'permanent',
        'refused',
      ]);
      assert.deepEqual(await refusal(g, phones(1)[0]!), ['account', 'vonage status 15: as Vonage says']);
    } finally {
      await vonage.close();
    }
  });

  it('Unifonic: 401, 410 (recipient format), 412 (body too long), 480 (sender id) are the account; 482 the number', async () => {
    const answers = [
      { status: 401, json: { success: false, message: 'Authentication failed' } },
      { status: 410, json: { success: false, message: 'Invalid recipient format' } },
      { status: 412, json: { success: false, message: 'Message body is too long' } },
      { status: 200, json: { success: false, errorCode: '480', message: 'This user cannot use specified SenderID' } },
      { status: 200, json: { success: false, errorCode: 'ER-08', message: 'Invalid Sender ID' } },
      { status: 200, json: { success: false, errorCode: '482', message: 'Invalid dest num' } },
      { status: 429, json: { success: false, message: 'Too many requests generated by this user' } },
    ];
    const byPhone = new Map(phones(answers.length).map((p, i) => [p.slice(1), answers[i]!]));
    const unifonic = await startStandIn((r) => byPhone.get(r.params.get('Recipient') ?? '')!);
    const g = unifonicGateway({ appSid: 'a', webhookToken: null, apiUrl: unifonic.url }, 'SCHOOL', 5000);
    try {
      assert.deepEqual(await kinds(g, phones(answers.length)), [
        'account',
        'account',
        'account',
        'account',
        'account',
        'permanent',
        'refused',
      ]);
    } finally {
      await unifonic.close();
    }
  });

  it('Twilio: 20003 (authentication), 21212 and 21606 (the From) are the account; 21211 the number', async () => {
    const answers = [
      { status: 401, json: { code: 20003, message: 'Authenticate' } },
      { status: 400, json: { code: 21212, message: "The 'From' number SCHOOL is not a valid phone number" } },
      {
        status: 400,
        json: {
          code: 21606,
          message:
            "The 'From' phone number provided is not a valid message-capable Twilio phone number for this destination/account",
        },
      },
      {
        status: 400,
        json: {
          code: 21608,
          message: 'The number is unverified. Trial accounts may only send messages to verified numbers',
        },
      },
      { status: 400, json: { code: 21211, message: "The 'To' number is not a valid phone number." } },
      { status: 429, json: { code: 20429, message: 'Too Many Requests' } },
    ];
    const byPhone = new Map(phones(answers.length).map((p, i) => [p, answers[i]!]));
    const twilio = await startStandIn((r) => byPhone.get(r.params.get('To') ?? '')!);
    const g = twilioGateway(
      { accountSid: ACCOUNT, authToken: 't'.repeat(32), apiUrl: twilio.url },
      'SCHOOL',
      null,
      5000,
    );
    try {
      assert.deepEqual(await kinds(g, phones(answers.length)), [
        'account',
        'account',
        'account',
        'account',
        'permanent',
        'refused',
      ]);
    } finally {
      await twilio.close();
    }
  });

  it("Kannel: 'Authorization failed for sendsms' and a missing sender are the account; 'Not routable' the number", async () => {
    const answers = [
      { status: 403, text: 'Authorization failed for sendsms' },
      { status: 403, text: 'Sender missing and no global set, rejected' },
      { status: 403, text: 'Not routable. Do not try again.' },
      { status: 503, text: 'Temporal failure, try again later.' },
    ];
    const byPhone = new Map(phones(answers.length).map((p, i) => [p, answers[i]!]));
    const kannel = await startStandIn((r) => byPhone.get(r.params.get('to') ?? '')!);
    const g = kannelGateway({ url: kannel.url, user: 'u', password: 'p', smsc: null }, null, null, 5000);
    try {
      assert.deepEqual(await kinds(g, phones(answers.length)), ['account', 'account', 'permanent', 'refused']);
    } finally {
      await kannel.close();
    }
  });

  it("the webhook: the bridge's 401 or 403 (our signature) is the account; a 400 is for a while", async () => {
    const statuses = [401, 403, 400];
    const bridge = await startSmsGateway('the-bridge-secret', (n) => statuses[n]!);
    const g = webhookGateway({
      url: bridge.url,
      secret: 'the-bridge-secret',
      timeoutMs: 5000,
      receiptPath: null,
      receiptSecret: 'the-bridge-secret',
    });
    try {
      assert.deepEqual(await kinds(g, phones(statuses.length)), ['account', 'account', 'refused']);
    } finally {
      await bridge.close();
    }
  });

  it('SMPP: ESME_RINVMSGLEN (0x01) and ESME_RINVSRCADR (0x0A) are the account; ESME_RINVDSTADR (0x0B) the number', async () => {
    const statuses = [0x01, 0x0a, 0x0b, 0x58];
    const byPhone = new Map(phones(statuses.length).map((p, i) => [p.slice(1), statuses[i]!]));
    const smsc = await startSmsc((to) => byPhone.get(to) ?? 0x08);
    const g = smppGateway(
      { url: smsc.url, systemId: 'sis', password: 'secret', bind: 'transceiver', window: 1 },
      'SCHOOL',
      5000,
    );
    try {
      assert.deepEqual(await kinds(g, phones(statuses.length)), ['account', 'account', 'permanent', 'refused']);
    } finally {
      await g.close?.();
      await smsc.close();
    }
  });
});

interface Row {
  readonly phone: string;
  readonly state: string;
  readonly attempts: number;
  readonly gateway: string | null;
  readonly last_error: string | null;
}

describe('the outbox after a refusal for good', () => {
  it(
    'fails the message at once when every gateway refused it for good; tries the next gateway first, and again later after a refusal for a while',
    { timeout: 90_000 },
    async () => {
      // Unifonic refuses every number for good; Twilio takes the first, refuses the second for good, the third for a while.
      const unifonic = await startStandIn(() => ({
        status: 200,
        json: { success: false, errorCode: '482', message: 'Invalid dest num' },
      }));
      const twilio = await startStandIn((r) =>
        r.params.get('To') === '+966500000011'
          ? { status: 201, json: { sid: `SM${'1'.repeat(32)}` } }
          : r.params.get('To') === '+966500000012'
            ? { status: 400, json: { code: 21614, message: "'To' number is not a valid mobile number" } }
            : { status: 429, json: { code: 20429, message: 'Too Many Requests' } },
      );
      const server = await startTestServer({
        env: {
          ...SMS_DEFAULTS,
          SIS_SMS_GATEWAY: 'unifonic,twilio',
          SIS_SMS_UNIFONIC_APP_SID: 'app-sid',
          SIS_SMS_UNIFONIC_API_URL: unifonic.url,
          SIS_SMS_TWILIO_ACCOUNT_SID: ACCOUNT,
          SIS_SMS_TWILIO_AUTH_TOKEN: 't'.repeat(32),
          SIS_SMS_TWILIO_API_URL: twilio.url,
          SIS_OUTBOX_POLL_MS: '50',
          // Long enough that a retry would not come during the test: what counts is whether one is planned.
          SIS_OUTBOX_BACKOFF_MS: '600000',
        },
      });
      try {
        for (const [i, phone] of ['+966500000011', '+966500000012', '+966500000013'].entries())
          assert.equal((await authCode(server.url, phone, `10.41.5.${i + 1}`)).status, 200);
        const rows = await eventually(
          () => {
            const r = sqliteRows<Row>(
              server.databaseFile,
              'select phone, state, attempts, gateway, last_error from outbox order by id',
            );
            return r.length === 3 && r.every((m) => m.state === 'delivered' || m.last_error !== null) ? r : undefined;
          },
          60_000,
          'each message tried once',
        );
        const [taken, refused, later] = rows as [Row, Row, Row];
        assert.deepEqual([taken.state, taken.gateway], ['delivered', 'twilio'], 'the next gateway was tried');
        assert.deepEqual([refused.state, refused.attempts], ['failed', 1], 'failed at once, not after 8 attempts');
        assert.equal(
          refused.last_error,
          "number refused: unifonic: unifonic 482: Invalid dest num; twilio: twilio answered 400: 21614 'To' number is not a valid mobile number",
        );
        assert.deepEqual([later.state, later.attempts], ['pending', 1], 'tried again later');
        const metrics = await (await fetch(`${server.url}/metrics`)).text();
        assert.match(metrics, /^sis_outbox_deliveries_total\{gateway="twilio",result="failed"\} 1$/m);
        assert.match(metrics, /^sis_outbox_deliveries_total\{gateway="twilio",result="retry"\} 1$/m);
      } finally {
        await server.close();
        await unifonic.close();
        await twilio.close();
      }
    },
  );
});
