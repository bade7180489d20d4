/**
 * Kannel (bearerbox + smsbox, deploy/kannel/): a message is a GET of smsbox's sendsms with the
 * sendsms-user's credentials; smsbox answers 202 `0: Accepted for delivery` (or `3: Queued for later
 * delivery`) and an error status otherwise. With SIS_SMS_CALLBACK_URL, it is asked for delivery
 * reports (`dlr-mask` 1+2+16: delivered, failed, rejected by the SMSC) at a `dlr-url` carrying our
 * id and a token (HMAC-SHA256 of the id under the sendsms password, which only Kannel and we
 * know), so a report names its message and cannot be forged for another; Kannel fills in `%d`
 * (the report's type) and `%A` (the SMSC's words).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { KannelSettings } from '../../config/gateway-settings.js';
import { smsSize } from '../../sms/sms-segments.js';
import { fetchFailure, GatewayError, httpRefusal, oneLine } from './gateway.js';
import type { Callback, CallbackRefusal, Gateway, OutboundSms, ProviderReceipt } from './gateway.js';

/** Kannel's DLR types (its %d): delivered to the phone, failed, buffered, accepted by the SMSC, rejected by it. */
const DELIVERED = 1;
const FAILED = 2;
const SMSC_REJECT = 16;
/** The reports asked for: the final ones only (a buffered or accepted one is on the way). */
const DLR_MASK = DELIVERED | FAILED | SMSC_REJECT;
/**
 * smsbox's answers (403) that refuse this message for good: no route for the number ("Not
 * routable. Do not try again.") or a number its white- or black-list denies. Its other refusals
 * are about our request or its own state ("Authorization failed for sendsms", "Temporal failure,
 * try again later.", a 5xx): tried again later.
 */
const FOR_GOOD = /Do not try again|denied by white- and\/or black-lists/i;
/**
 * smsbox's answers that refuse our account or configuration, whatever the number: the
 * sendsms-user's credentials or allowed IPs ("Authorization failed for sendsms"), no sender and
 * no default one ("Sender missing and no global set"), or a sender it does not allow. Tried again
 * later, and the gateway is "refusing" at once.
 */
const ACCOUNT = /Authorization failed|Sender missing|sender .*(?:not allowed|denied)/i;

export function kannelGateway(
  settings: KannelSettings,
  senderId: string | null,
  callbackUrl: string | null,
  timeoutMs: number,
): Gateway {
  const token = (id: number): string =>
    createHmac('sha256', settings.password).update(`kannel:${id}`).digest('hex').slice(0, 32);
  return {
    name: 'kannel',
    async send(message: OutboundSms) {
      const query = new URLSearchParams({
        username: settings.user,
        password: settings.password,
        to: message.phone,
        text: message.message,
        charset: 'UTF-8',
        // UCS-2 (coding 2) for Arabic and anything GSM 7-bit cannot write; Kannel converts from UTF-8.
        coding: smsSize(message.message).encoding === 'UCS-2' ? '2' : '0',
      });
      if (senderId !== null) query.set('from', senderId);
      if (settings.smsc !== null) query.set('smsc', settings.smsc);
      if (callbackUrl !== null) {
        query.set('dlr-mask', String(DLR_MASK));
        query.set('dlr-url', `${callbackUrl}/kannel?id=${message.id}&t=${token(message.id)}&type=%d&reason=%A`);
      }
      let res: Response;
      try {
        res = await fetch(`${settings.url}?${query.toString()}`, { signal: AbortSignal.timeout(timeoutMs) });
      } catch (err) {
        throw fetchFailure(err, timeoutMs);
      }
      const text = await res.text().catch(() => '');
      if (res.status === 202 || res.status === 200) {
        if (/^[03]:/.test(text)) return { gatewayMessageId: null };
        throw new GatewayError('refused', `kannel answered ${res.status}: ${oneLine(text)}`);
      }
      throw httpRefusal(
        'kannel',
        res.status,
        text,
        ACCOUNT.test(text) || res.status === 401
          ? 'account'
          : res.status === 403 && FOR_GOOD.test(text)
            ? 'permanent'
            : 'refused',
      );
    },
    async probe(probeMs) {
      // The credentials without a receiver: 400 "Missing receiver number" says both are right, and sends nothing.
      const query = new URLSearchParams({ username: settings.user, password: settings.password });
      let res: Response;
      try {
        res = await fetch(`${settings.url}?${query.toString()}`, { signal: AbortSignal.timeout(probeMs) });
      } catch (err) {
        throw new Error(
          `Kannel at ${new URL(settings.url).origin} does not answer (${fetchFailure(err, probeMs).message}): check SIS_SMS_KANNEL_URL and smsbox`,
        );
      }
      const text = oneLine(await res.text().catch(() => ''));
      if (res.status === 403 || res.status === 401)
        throw new Error(
          `Kannel refused the sendsms-user (${text}): check SIS_SMS_KANNEL_USER and SIS_SMS_KANNEL_PASSWORD`,
        );
      if (res.status >= 500) throw new Error(`Kannel answered ${res.status} (${text})`);
      return `Kannel at ${new URL(settings.url).origin} took the sendsms-user (answered ${res.status}: ${text})`;
    },
    readCallback(callback: Callback): ProviderReceipt | CallbackRefusal {
      const query = new URL(callback.url, 'http://callback').searchParams;
      const id = query.get('id') ?? '';
      const given = Buffer.from(query.get('t') ?? '');
      if (!/^[1-9]\d{0,15}$/.test(id)) return { refused: 400, text: 'id: expected the message id the dlr-url carried' };
      const expected = Buffer.from(token(Number(id)));
      if (given.length !== expected.length || !timingSafeEqual(given, expected))
        return { refused: 401, text: 'bad token: expected the t= the dlr-url carried' };
      const type = Number(query.get('type'));
      const reason = oneLine(query.get('reason') ?? '');
      const status =
        type === DELIVERED ? 'delivered' : type === FAILED ? 'undelivered' : type === SMSC_REJECT ? 'failed' : null;
      if (status === null) {
        if (/^\d+$/.test(query.get('type') ?? '')) return { ignore: `report type ${type} is on the way` };
        return { refused: 400, text: 'type: expected the report type Kannel puts for %d' };
      }
      return { message: { id: Number(id) }, status, reason: reason === '' ? null : reason, at: null };
    },
  };
}
