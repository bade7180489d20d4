/**
 * Twilio's Programmable Messaging API, as documented (no SDK): a form POST to
 * /2010-04-01/Accounts/{AccountSid}/Messages.json with Basic auth (Account SID, Auth Token), `To`,
 * `From` (the sender id), `Body` and, for delivery reports, `StatusCallback`; 201 with the message's
 * `sid`, or 4xx with `{code, message}`. Status callbacks are form POSTs signed with
 * `X-Twilio-Signature`: base64 HMAC-SHA1, under the Auth Token, of the full URL Twilio called
 * followed by each POST parameter's name and value, sorted by name.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { TwilioSettings } from '../../config/gateway-settings.js';
import { fetchFailure, httpRefusal, oneLine, refusalOf } from './gateway.js';
import type { Callback, CallbackRefusal, Gateway, OutboundSms, ProviderReceipt } from './gateway.js';

/** Twilio's X-Twilio-Signature of a request to `url` with form parameters `params`. */
export function twilioSignature(authToken: string, url: string, params: Iterable<readonly [string, string]>): string {
  const sorted = [...params].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const data = url + sorted.map(([k, v]) => k + v).join('');
  return createHmac('sha1', authToken).update(data, 'utf8').digest('base64');
}

/** MessageStatus values that are a message's last word, and what they mean here. */
const FINAL: Readonly<Record<string, 'delivered' | 'undelivered' | 'failed'>> = {
  delivered: 'delivered',
  undelivered: 'undelivered',
  failed: 'failed',
};
/** Statuses on the way: answered 200, nothing recorded. */
const ON_THE_WAY = new Set([
  'accepted',
  'scheduled',
  'queued',
  'sending',
  'sent',
  'receiving',
  'received',
  'read',
  'canceled',
]);

/**
 * Twilio's error codes that refuse this number for good (its Error and Warning Dictionary): 21211
 * invalid 'To', 21214 cannot be reached, 21217 not a valid number, 21401 invalid number, 21407 a
 * type that takes no SMS, 21408 a region the account may not send to, 21610 the recipient
 * unsubscribed (STOP), 21612 not reachable by SMS, 21614 not a mobile. Any other refusal (20429
 * too many requests, a 5xx) is tried again later.
 */
const FOR_GOOD = new Set([21211, 21214, 21217, 21401, 21407, 21408, 21610, 21612, 21614]);
/**
 * Twilio's codes that refuse the account or its configuration, whatever the number: 20003
 * authentication (a wrong SID or token), 20005 account not active, 20404 no such account, 21212
 * invalid From (SIS_SMS_SENDER_ID), 21603 From missing, 21606 a From the account may not send SMS
 * from, 21608 a trial account's unverified destination (every parent's, until it is upgraded),
 * 21659 a From that is not the account's, 21617 a body over 1,600 characters (the template). Tried
 * again later, and the gateway is "refusing" at once (docs/sms.md, Refusals of the account).
 */
const ACCOUNT = new Set([20003, 20005, 20404, 21212, 21603, 21606, 21608, 21617, 21659]);

export function twilioGateway(
  settings: TwilioSettings,
  senderId: string | null,
  callbackUrl: string | null,
  timeoutMs: number,
): Gateway {
  const account = `${settings.apiUrl}/2010-04-01/Accounts/${encodeURIComponent(settings.accountSid)}`;
  const authorization = `Basic ${Buffer.from(`${settings.accountSid}:${settings.authToken}`).toString('base64')}`;
  return {
    name: 'twilio',
    async send(message: OutboundSms) {
      const form = new URLSearchParams({ To: message.phone, Body: message.message });
      if (senderId !== null) form.set('From', senderId);
      if (callbackUrl !== null) form.set('StatusCallback', `${callbackUrl}/twilio?id=${message.id}`);
      let res: Response;
      try {
        res = await fetch(`${account}/Messages.json`, {
          method: 'POST',
          headers: { Authorization: authorization, 'Content-Type': 'application/x-www-form-urlencoded' },
          body: form,
          signal: AbortSignal.timeout(timeoutMs),
        });
      } catch (err) {
        throw fetchFailure(err, timeoutMs);
      }
      const answer = (await res.json().catch(() => ({}))) as { sid?: unknown; code?: unknown; message?: unknown };
      if (res.status !== 201 && res.status !== 200)
        throw httpRefusal(
          'twilio',
          res.status,
          `${String(answer.code ?? '')} ${String(answer.message ?? '')}`.trim(),
          res.status === 401 || res.status === 403 ? 'account' : refusalOf(Number(answer.code), FOR_GOOD, ACCOUNT),
        );
      return { gatewayMessageId: typeof answer.sid === 'string' ? answer.sid : null };
    },
    async probe(probeMs) {
      // The account itself: 200 says the SID and token are right, and sends nothing.
      let res: Response;
      try {
        res = await fetch(`${account}.json`, {
          headers: { Authorization: authorization },
          signal: AbortSignal.timeout(probeMs),
        });
      } catch (err) {
        throw new Error(`Twilio (${settings.apiUrl}) does not answer (${fetchFailure(err, probeMs).message})`);
      }
      await res.arrayBuffer().catch(() => undefined);
      if (res.status === 401 || res.status === 404)
        throw new Error(
          `Twilio refused the account (${res.status}): check SIS_SMS_TWILIO_ACCOUNT_SID and SIS_SMS_TWILIO_AUTH_TOKEN`,
        );
      if (res.status !== 200) throw new Error(`Twilio answered ${res.status} for the account`);
      return `Twilio (${settings.apiUrl}) took the account`;
    },
    readCallback(callback: Callback): ProviderReceipt | CallbackRefusal {
      if (callbackUrl === null)
        return { refused: 404, text: 'no SIS_SMS_CALLBACK_URL: Twilio was asked for no status callbacks' };
      const params = new URLSearchParams(callback.body.toString('utf8'));
      // The URL Twilio called, as it was given: our public URL and the path's rest (…/twilio?id=).
      const url = callbackUrl + callback.url.slice(callback.url.indexOf('/twilio'));
      const header = callback.headers['x-twilio-signature'];
      const given = Buffer.from(typeof header === 'string' ? header : '');
      const expected = Buffer.from(twilioSignature(settings.authToken, url, params));
      if (given.length !== expected.length || !timingSafeEqual(given, expected))
        return {
          refused: 401,
          text: 'bad signature: expected X-Twilio-Signature over the URL and the sorted POST parameters',
        };
      const id = new URL(callback.url, 'http://callback').searchParams.get('id') ?? '';
      if (!/^[1-9]\d{0,15}$/.test(id))
        return { refused: 400, text: 'id: expected the message id the StatusCallback carried' };
      if (params.get('AccountSid') !== settings.accountSid)
        return { refused: 400, text: 'AccountSid: not this account' };
      const status = params.get('MessageStatus') ?? '';
      const final = FINAL[status];
      if (final === undefined) {
        if (ON_THE_WAY.has(status)) return { ignore: `status ${status} is on the way` };
        return { refused: 400, text: "MessageStatus: expected one of Twilio's message statuses" };
      }
      const code = params.get('ErrorCode');
      return {
        message: { id: Number(id) },
        status: final,
        reason: code === null || code === '' ? null : oneLine(`error ${code}`),
        at: null,
      };
    },
  };
}
