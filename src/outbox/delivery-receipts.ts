/**
 * Delivery receipts (docs/sms.md): the SMS gateway POSTs each message's fate to
 * SIS_SMS_RECEIPT_PATH, signed like the webhook (`X-Signature-256: sha256=<hex HMAC-SHA256 of the
 * raw body>`) under the secret it is given (SIS_SMS_RECEIPT_SECRET, else SIS_SMS_WEBHOOK_SECRET),
 * and the outbox row records it. The body is
 * `{"id", "status", "reason", "timestamp"}`: `id` the webhook's X-Message-Id, `status` delivered,
 * failed or undelivered, `timestamp` Unix seconds inside the signed body, so a receipt replayed
 * later is refused as stale (410) and one replayed within the window finds a receipt at least as
 * new already recorded (409). A refused receipt changes nothing. HTTP is the server's business
 * (src/http/request-handler.ts); this part knows the body and the signature only.
 */
import { timingSafeEqual } from 'node:crypto';
import type { Logger } from '../logging/logger.js';
import { RECEIPT_STATUSES } from '../store/outbox-types.js';
import type { DeliveryReceipt, OutboxStore, ReceiptStatus } from '../store/outbox-types.js';
import { signature } from './webhook.js';

/** A receipt this much older or newer than our clock is refused (replays, clocks far apart). */
const RECEIPT_WINDOW_S = 300;
/** A receipt is a few dozen bytes: more is not one. */
export const RECEIPT_MAX_BYTES = 4096;
/** The gateway's reason is kept as one line of at most this many characters. */
const MAX_REASON_CHARS = 200;
/** Refused receipts are logged at most this often (a flood of forgeries writes one line a minute). */
const REFUSED_LOG_MS = 60_000;

export interface ReceiptAnswer {
  readonly status: number;
  readonly text: string;
}

/**
 * A report checked: refused at once (`failed`: for its signature or token, a guess at the key), or
 * genuine, to be recorded (or not: `record` says why).
 */
export type CheckedReport =
  { readonly failed: boolean; readonly answer: ReceiptAnswer } | { readonly record: () => Promise<ReceiptAnswer> };

export class DeliveryReceipts {
  /** Receipts recorded by this process, by status (sis_sms_delivery_total). */
  readonly deliveries = new Map<ReceiptStatus, number>();
  #refusedLoggedAt = -Infinity;

  constructor(
    /** The path the gateway posts to (SIS_SMS_RECEIPT_PATH). */
    readonly path: string,
    private readonly secret: string,
    private readonly store: OutboxStore,
    private readonly log: Logger,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /**
   * Checks one receipt: refused at once (`failed` when its signature is wrong: a guess at the
   * key, which the report brake counts), or genuine, and `record` records it: 200 recorded; 4xx,
   * with what was wrong, changes nothing. A genuine receipt too old or new is 410 (stale), one
   * already recorded 409 (replayed): neither is a failure.
   */
  check(signatureHeader: string | undefined, body: Buffer): CheckedReport {
    if (!this.signed(signatureHeader, body))
      return {
        failed: true,
        answer: this.refused(401, 'bad signature: expected X-Signature-256: sha256=<hex HMAC-SHA256 of the body>'),
      };
    const receipt = this.read(body);
    if (typeof receipt === 'string') return { failed: false, answer: this.refused(400, receipt) };
    const skew = Math.abs(receipt.at.getTime() - this.now().getTime()) / 1000;
    if (skew > RECEIPT_WINDOW_S)
      return {
        failed: false,
        answer: this.refused(410, `stale timestamp: more than ${RECEIPT_WINDOW_S} s from this server's clock`),
      };
    return { record: () => this.record(receipt) };
  }

  private async record(receipt: DeliveryReceipt): Promise<ReceiptAnswer> {
    // Our format is the webhook's: a message another gateway took has its provider's reports, not these.
    const sent = await this.store.sentMessage({ id: receipt.id });
    if (sent === null || (sent.gateway !== null && sent.gateway !== 'webhook'))
      return this.refused(404, `no message ${receipt.id} sent by webhook in the outbox`);
    const result = await this.store.recordReceipt(receipt);
    if (result === 'unknown') return this.refused(404, `no message ${receipt.id} in the outbox`);
    if (result === 'replayed') return this.refused(409, `message ${receipt.id} already holds a receipt as new`);
    this.deliveries.set(receipt.status, (this.deliveries.get(receipt.status) ?? 0) + 1);
    this.log.debug({ outboxId: receipt.id, status: receipt.status }, 'outbox: delivery receipt');
    return { status: 200, text: 'recorded' };
  }

  private signed(header: string | undefined, body: Buffer): boolean {
    if (header === undefined) return false;
    const expected = Buffer.from(signature(this.secret, body));
    const given = Buffer.from(header.trim());
    return given.length === expected.length && timingSafeEqual(given, expected);
  }

  /** The receipt, or what is wrong with the body. */
  private read(body: Buffer): DeliveryReceipt | string {
    let value: unknown;
    try {
      value = JSON.parse(body.toString('utf8'));
    } catch {
      return 'expected a JSON body';
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'expected a JSON object';
    const { id, status, reason, timestamp } = value as Record<string, unknown>;
    const n = typeof id === 'string' && /^[1-9]\d{0,15}$/.test(id) ? Number(id) : id;
    if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 1)
      return 'id: expected the X-Message-Id of the message';
    if (typeof status !== 'string' || !(RECEIPT_STATUSES as readonly string[]).includes(status))
      return `status: expected one of ${RECEIPT_STATUSES.join(', ')}`;
    if (reason !== undefined && reason !== null && typeof reason !== 'string') return 'reason: expected a text';
    // A whole number of seconds may still be no date (beyond ±8.64e12 s): a 400, not a failed write.
    const at = typeof timestamp === 'number' && Number.isSafeInteger(timestamp) ? new Date(timestamp * 1000) : null;
    if (at === null || Number.isNaN(at.getTime())) return 'timestamp: expected Unix seconds (a whole number)';
    const line =
      typeof reason === 'string'
        ? reason
            .replace(/[\p{C}\s]+/gu, ' ')
            .trim()
            .slice(0, MAX_REASON_CHARS)
        : '';
    return {
      id: n,
      status: status as ReceiptStatus,
      reason: line === '' ? null : line,
      at,
    };
  }

  private refused(status: number, text: string): ReceiptAnswer {
    const now = Date.now();
    if (now - this.#refusedLoggedAt >= REFUSED_LOG_MS) {
      this.#refusedLoggedAt = now;
      this.log.warn({ status, problem: text }, 'outbox: a delivery receipt was refused (logged once a minute)');
    }
    return { status, text };
  }
}
