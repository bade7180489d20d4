/**
 * Vonage's SMS API, as documented (no SDK): a form POST to /sms/json with `api_key`,
 * `api_secret`, `to` (international, without +), `from` (the sender id), `text` (`type=unicode`
 * for UCS-2), `client-ref` (our id) and, for delivery reports, `callback` with
 * `status-report-req=1`; the answer's `messages[0].status` is "0" when taken, else its
 * `error-text` says why. Delivery receipts are signed (the account's signed webhooks): `sig` over
 * every other parameter sorted by name as `&name=value` (`&` and `=` in values as `_`), MD5 of
 * that and the signature secret (`md5hash`, the dashboard's default) or its HMAC under the secret
 * (md5, sha1, sha256, sha512); the signed `timestamp` must be within 5 minutes. Every parameter
 * given is signed: a receipt whose parameters do not say one text each (a null, a list, a name
 * twice, `&` or `=` in a value) is refused before the signature is checked.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { VonageSettings } from '../../config/gateway-settings.js';
import { smsSize } from '../../sms/sms-segments.js';
import { callbackParams } from './callback-params.js';
import { fetchFailure, GatewayError, httpRefusal, oneLine, refusalOf } from './gateway.js';
import type { Callback, CallbackRefusal, Gateway, OutboundSms, ProviderReceipt } from './gateway.js';

/** A receipt signed more than this far from our clock is refused (a replay, or a clock to fix). */
const WINDOW_S = 300;

/** Vonage's signature of callback parameters (`sig` left out). */
export function vonageSignature(
  method: VonageSettings['signatureMethod'],
  secret: string,
  params: ReadonlyMap<string, string>,
): string {
  const keys = [...params.keys()].filter((k) => k !== 'sig').sort();
  const signed = keys.map((k) => `&${k}=${params.get(k)!.replace(/[&=]/g, '_')}`).join('');
  if (method === 'md5hash')
    return createHash('md5')
      .update(signed + secret)
      .digest('hex');
  return createHmac(method, secret).update(signed).digest('hex');
}

const STATUS: Readonly<Record<string, 'delivered' | 'undelivered' | 'failed'>> = {
  delivered: 'delivered',
  expired: 'undelivered',
  failed: 'undelivered',
  rejected: 'failed',
};

/**
 * Vonage's SMS API statuses that refuse this number for good (its API errors): 3 invalid
 * parameters (the `to`), 6 invalid message (an unrecognised number prefix), 7 number barred, 22
 * invalid network code, 33 number de-activated. The others (1 throttled, 5 internal error…) are
 * tried again later.
 */
const FOR_GOOD = new Set(['3', '6', '7', '22', '33']);
/**
 * Its statuses that refuse the account or configuration, whatever the number: 2 missing
 * parameters, 4 invalid credentials, 8 account barred, 9 quota exceeded (no credit), 11 account
 * not enabled for this API, 12 message too long (the template), 14 invalid signature, 15 invalid
 * sender address (SIS_SMS_SENDER_ID), 23 invalid callback URL, 29 non-whitelisted destination (a
 * demo account), 32 signature and secret disallowed. Tried again later, and the gateway is
 * "refusing" at once.
 */
const ACCOUNT = new Set(['2', '4', '8', '9', '11', '12', '14', '15', '23', '29', '32']);

export function vonageGateway(
  settings: VonageSettings,
  senderId: string | null,
  callbackUrl: string | null,
  timeoutMs: number,
): Gateway {
  return {
    name: 'vonage',
    async send(message: OutboundSms) {
      const form = new URLSearchParams({
        api_key: settings.apiKey,
        api_secret: settings.apiSecret,
        to: message.phone.replace(/^\+/, ''),
        from: senderId ?? 'SIS',
        text: message.message,
        'client-ref': String(message.id),
      });
      if (smsSize(message.message).encoding === 'UCS-2') form.set('type', 'unicode');
      if (callbackUrl !== null) {
        form.set('callback', `${callbackUrl}/vonage`);
        form.set('status-report-req', '1');
      }
      let res: Response;
      try {
        res = await fetch(`${settings.apiUrl}/sms/json`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
          body: form,
          signal: AbortSignal.timeout(timeoutMs),
        });
      } catch (err) {
        throw fetchFailure(err, timeoutMs);
      }
      const answer = (await res.json().catch(() => null)) as {
        messages?: { status?: unknown; 'message-id'?: unknown; 'error-text'?: unknown }[];
      } | null;
      if (!res.ok) throw httpRefusal('vonage', res.status, '', res.status === 401 ? 'account' : 'refused');
      const first = answer?.messages?.[0];
      if (first === undefined) throw new GatewayError('refused', 'vonage answered without a message status');
      if (String(first.status) !== '0')
        throw new GatewayError(
          refusalOf(String(first.status), FOR_GOOD, ACCOUNT),
          `vonage status ${String(first.status)}: ${oneLine(String(first['error-text'] ?? ''))}`,
        );
      return { gatewayMessageId: typeof first['message-id'] === 'string' ? first['message-id'] : null };
    },
    async probe(probeMs) {
      // The balance: 200 says the key and secret are right, and sends nothing.
      const query = new URLSearchParams({ api_key: settings.apiKey, api_secret: settings.apiSecret });
      let res: Response;
      try {
        res = await fetch(`${settings.apiUrl}/account/get-balance?${query.toString()}`, {
          signal: AbortSignal.timeout(probeMs),
        });
      } catch (err) {
        throw new Error(`Vonage (${settings.apiUrl}) does not answer (${fetchFailure(err, probeMs).message})`);
      }
      await res.arrayBuffer().catch(() => undefined);
      if (res.status === 401)
        throw new Error('Vonage refused the key (401): check SIS_SMS_VONAGE_API_KEY and SIS_SMS_VONAGE_API_SECRET');
      if (res.status !== 200) throw new Error(`Vonage answered ${res.status} for the balance`);
      return `Vonage (${settings.apiUrl}) took the key`;
    },
    readCallback(callback: Callback, now: Date): ProviderReceipt | CallbackRefusal {
      if (settings.signatureSecret === null)
        return { refused: 401, text: 'SIS_SMS_VONAGE_SIGNATURE_SECRET is not set: unsigned receipts are refused' };
      const params = callbackParams(callback);
      if (typeof params === 'string') return { refused: 400, text: params };
      // Vonage writes `&` and `=` in values as `_` before signing: such a value is one of several that sign alike.
      const spoilt = [...params].find(([k, v]) => k !== 'sig' && /[&=]/.test(v));
      if (spoilt !== undefined)
        return { refused: 400, text: `${spoilt[0]}: a value with & or = cannot be told from others signed alike` };
      const given = Buffer.from((params.get('sig') ?? '').toLowerCase());
      const expected = Buffer.from(
        vonageSignature(settings.signatureMethod, settings.signatureSecret, params).toLowerCase(),
      );
      if (given.length !== expected.length || !timingSafeEqual(given, expected))
        return {
          refused: 401,
          text: `bad signature: expected sig (${settings.signatureMethod}) over the sorted parameters`,
        };
      const timestamp = params.get('timestamp') ?? '';
      if (!/^\d{1,12}$/.test(timestamp)) return { refused: 400, text: 'timestamp: expected Unix seconds' };
      const at = new Date(Number(timestamp) * 1000);
      if (Math.abs(at.getTime() - now.getTime()) / 1000 > WINDOW_S)
        return { refused: 410, text: `stale timestamp: more than ${WINDOW_S} s from this server's clock` };
      const ref = params.get('client-ref') ?? '';
      if (!/^[1-9]\d{0,15}$/.test(ref))
        return { refused: 400, text: 'client-ref: expected the message id sent with it' };
      const raw = params.get('status') ?? '';
      const status = STATUS[raw];
      if (status === undefined) {
        if (['accepted', 'buffered', 'unknown'].includes(raw)) return { ignore: `status ${raw} is on the way` };
        return { refused: 400, text: "status: expected one of Vonage's delivery statuses" };
      }
      const code = params.get('err-code');
      return {
        message: { id: Number(ref) },
        status,
        reason: code === undefined || code === '0' ? null : `err-code ${oneLine(code)}`,
        at,
      };
    },
  };
}
