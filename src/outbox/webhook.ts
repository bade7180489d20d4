import { createHmac } from 'node:crypto';
import type { OutboxMessage } from '../store/outbox-types.js';

/** Delivers one message; rejects with a short, loggable reason (never the code) on failure. */
export type Deliver = (message: OutboxMessage) => Promise<void>;

export interface WebhookOptions {
  readonly url: string;
  readonly secret: string;
  readonly timeoutMs: number;
}

/**
 * `sha256=<hex HMAC-SHA256 of the raw body>`, GitHub-style, so gateways can verify the sender: of
 * a text's UTF-8 bytes, or of the bytes as they came (a receipt's body, never decoded first).
 */
export function signature(secret: string, body: string | Buffer): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/**
 * The SMS gateway webhook: a POST of `{"phone", "code", "message"}` as application/json, signed
 * with `X-Signature-256`. `X-Message-Id` lets a gateway drop a repeat: delivery is at least once
 * if a process dies between the gateway's answer and the outbox update. `traceparent` (W3C): the
 * AuthCode request's trace, when it had one, so the gateway's work joins it.
 */
export function createWebhookDeliver(options: WebhookOptions): Deliver {
  return async (message) => {
    const body = JSON.stringify({ phone: message.phone, code: message.code, message: message.message });
    let res: Response;
    try {
      res = await fetch(options.url, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          'X-Signature-256': signature(options.secret, body),
          'X-Message-Id': String(message.id),
          ...(message.traceparent === null ? {} : { traceparent: message.traceparent }),
        },
        body,
        signal: AbortSignal.timeout(options.timeoutMs),
      });
    } catch (err) {
      const reason = err instanceof Error ? (err.name === 'TimeoutError' ? 'timed out' : err.message) : String(err);
      throw new Error(`gateway unreachable: ${reason}`);
    }
    // Drain the answer so the connection can be reused.
    await res.arrayBuffer().catch(() => undefined);
    if (!res.ok) throw new Error(`gateway answered ${res.status}`);
  };
}
