/**
 * Unifonic's REST API, as documented (no SDK): a form POST to /rest/SMS/messages with `AppSid`,
 * `Recipient` (international, without + or 00), `Body`, `SenderID`, `responseType=JSON` and
 * `CorrelationID` (our id); the answer's `success` says whether it was taken, `data.MessageID` its
 * id, `errorCode`/`message` why not. Delivery reports come by the DLR webhook set in Unifonic's
 * console (`MessageID`, `DLR`: Delivered or Undeliverable): Unifonic documents no signature for it,
 * so the URL given there carries a token (`?token=`, SIS_SMS_UNIFONIC_WEBHOOK_TOKEN) checked in
 * constant time, and a report counts once (its final word; a replay changes nothing).
 */
import { timingSafeEqual } from 'node:crypto';
import type { UnifonicSettings } from '../../config/gateway-settings.js';
import { callbackParams } from './callback-params.js';
import { fetchFailure, GatewayError, httpRefusal, oneLine } from './gateway.js';
import type { Callback, CallbackRefusal, Gateway, OutboundSms, ProviderReceipt, RefusalKind } from './gateway.js';

/**
 * Unifonic's codes (as its HTTP status or the answer's errorCode) that refuse this number for good
 * (its REST API's status codes): 481 no such country, 482 invalid destination number, 483 no
 * operator for it. The others (429 too many requests, a 5xx…) are tried again later.
 */
const FOR_GOOD = /^(?:ER-?)?(?:481|482|483)$/i;
/**
 * Its codes that refuse the account or our configuration, whatever the number: 401
 * authentication failed, 402 AppSid missing, 403 an IP address the account does not allow, 406
 * wrong parameter format, 410 recipient format (we send every number alike, so no number would
 * pass), 412 body too long (the template), 440 wrong sender format, 460 invalid encoding, 480 a
 * SenderID this account may not use, 499 configuration error; and the errorCodes ER-01 (no credit
 * or country package) and ER-08 (sender id not registered). Tried again later, and the gateway is
 * "refusing" at once.
 */
const ACCOUNT = /^(?:(?:ER-?)?(?:401|402|403|406|410|412|440|460|480|499)|ER-0?[18])$/i;
const kindOf = (code: string): RefusalKind =>
  ACCOUNT.test(code) ? 'account' : FOR_GOOD.test(code) ? 'permanent' : 'refused';

export function unifonicGateway(settings: UnifonicSettings, senderId: string | null, timeoutMs: number): Gateway {
  return {
    name: 'unifonic',
    async send(message: OutboundSms) {
      const form = new URLSearchParams({
        AppSid: settings.appSid,
        Recipient: message.phone.replace(/^\+/, ''),
        Body: message.message,
        responseType: 'JSON',
        CorrelationID: String(message.id),
      });
      if (senderId !== null) form.set('SenderID', senderId);
      let res: Response;
      try {
        res = await fetch(`${settings.apiUrl}/rest/SMS/messages`, {
          method: 'POST',
          headers: { Accept: 'application/json', 'Content-Type': 'application/x-www-form-urlencoded' },
          body: form,
          signal: AbortSignal.timeout(timeoutMs),
        });
      } catch (err) {
        throw fetchFailure(err, timeoutMs);
      }
      const answer = (await res.json().catch(() => null)) as {
        success?: unknown;
        errorCode?: unknown;
        message?: unknown;
        data?: { MessageID?: unknown };
      } | null;
      const code = String(answer?.errorCode ?? '');
      if (res.status >= 400)
        throw httpRefusal('unifonic', res.status, String(answer?.message ?? ''), kindOf(`${res.status}`));
      if (answer?.success !== true && answer?.success !== 'true')
        throw new GatewayError(
          kindOf(code),
          `unifonic ${String(answer?.errorCode ?? 'answered')}: ${oneLine(String(answer?.message ?? ''))}`,
        );
      const id = answer.data?.MessageID;
      return { gatewayMessageId: typeof id === 'string' || typeof id === 'number' ? String(id) : null };
    },
    async probe(probeMs) {
      // Unifonic has no call that checks an AppSid without sending: the API's host answering is what can be told.
      const origin = new URL(settings.apiUrl).origin;
      let res: Response;
      try {
        res = await fetch(origin, { method: 'HEAD', signal: AbortSignal.timeout(probeMs), redirect: 'manual' });
      } catch (err) {
        throw new Error(`Unifonic (${origin}) does not answer (${fetchFailure(err, probeMs).message})`);
      }
      if (res.status >= 500) throw new Error(`Unifonic (${origin}) answered ${res.status}`);
      return `Unifonic (${origin}) answered ${res.status} (the AppSid is checked by the first message)`;
    },
    readCallback(callback: Callback): ProviderReceipt | CallbackRefusal {
      if (settings.webhookToken === null)
        return { refused: 401, text: "SIS_SMS_UNIFONIC_WEBHOOK_TOKEN is not set: Unifonic's reports are refused" };
      const token = new URL(callback.url, 'http://callback').searchParams.get('token') ?? '';
      const given = Buffer.from(token);
      const expected = Buffer.from(settings.webhookToken);
      if (given.length !== expected.length || !timingSafeEqual(given, expected))
        return { refused: 401, text: "bad token: expected the token= of the webhook URL set in Unifonic's console" };
      const params = callbackParams(callback);
      if (typeof params === 'string') return { refused: 400, text: params };
      const id = params.get('MessageID') ?? '';
      if (!/^[A-Za-z0-9-]{1,64}$/.test(id))
        return { refused: 400, text: 'MessageID: expected the id Unifonic gave the message' };
      const dlr = (params.get('DLR') ?? '').toLowerCase();
      const status =
        dlr === 'delivered' ? 'delivered' : dlr === 'undeliverable' || dlr === 'undelivered' ? 'undelivered' : null;
      if (status === null) return { refused: 400, text: 'DLR: expected Delivered or Undeliverable' };
      const comments = oneLine(params.get('Comments') ?? '');
      return { message: { gatewayMessageId: id }, status, reason: comments === '' ? null : comments, at: null };
    },
  };
}
