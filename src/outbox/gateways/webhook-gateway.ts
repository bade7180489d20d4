/**
 * Today's gateway, the default: the signed JSON POST of webhook.ts, to a bridge of the school's
 * own; its receipts come in our own format (delivery-receipts.ts), not through readCallback.
 */
import type { SmsWebhook } from '../../config/config-types.js';
import { probeWebhook } from '../../observe/probes.js';
import { createWebhookDeliver } from '../webhook.js';
import { GatewayError } from './gateway.js';
import type { Gateway } from './gateway.js';

export function webhookGateway(webhook: SmsWebhook): Gateway {
  const deliver = createWebhookDeliver(webhook);
  return {
    name: 'webhook',
    async send(message) {
      try {
        await deliver(message);
      } catch (err) {
        const text = err instanceof Error ? err.message : String(err);
        // webhook.ts's words: "gateway unreachable: timed out" is the one case the bridge may have the message;
        // a 401 or 403 is the bridge refusing our signature (SIS_SMS_WEBHOOK_SECRET), whatever the number.
        const kind = text.endsWith('timed out')
          ? 'unsure'
          : text.startsWith('gateway unreachable')
            ? 'unreachable'
            : /^gateway answered 40[13]$/.test(text)
              ? 'account'
              : 'refused';
        throw new GatewayError(kind, text);
      }
      // The bridge knows the message by our id (X-Message-Id), as its receipts do.
      return { gatewayMessageId: null };
    },
    probe: (timeoutMs) => probeWebhook(webhook.url, timeoutMs),
  };
}
