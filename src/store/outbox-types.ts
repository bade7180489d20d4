/**
 * The SMS outbox as the store keeps it. A message is accepted in the same transaction as its
 * AuthCode record, then claimed by one delivery worker at a time (a lease), and ends delivered
 * or failed. Claims use row locks that skip locked rows on PostgreSQL, so several instances
 * never deliver one message twice.
 */
export type OutboxState = 'pending' | 'delivered' | 'failed';

export interface OutboxMessage {
  readonly id: number;
  /** Masked (`+*********77`) once delivered. */
  readonly phone: string;
  /** Empty once delivered: the code and text are erased as the message is marked delivered. */
  readonly code: string;
  readonly message: string;
  readonly state: OutboxState;
  /** Delivery attempts made so far (a claim counts as one). */
  readonly attempts: number;
  readonly nextAttemptAt: Date;
  readonly lastError: string | null;
  readonly createdAt: Date;
  readonly deliveredAt: Date | null;
  /** What the gateway's last delivery receipt said (migration 8), or null before one came. */
  readonly receipt: ReceiptStatus | null;
  readonly receiptReason: string | null;
  /** The W3C traceparent its delivery carries, so the gateway's request joins the AuthCode's trace; null: none. */
  readonly traceparent: string | null;
  /** The gateway that accepted it (migration 11), or null before one did. */
  readonly gateway: string | null;
}

/** A message's fate as the gateway reports it (docs/sms.md, delivery receipts). */
export const RECEIPT_STATUSES = ['delivered', 'failed', 'undelivered'] as const;
export type ReceiptStatus = (typeof RECEIPT_STATUSES)[number];

export interface DeliveryReceipt {
  /** The outbox id the webhook sent as X-Message-Id. */
  readonly id: number;
  readonly status: ReceiptStatus;
  /** The gateway's reason, one line; null when it gave none. */
  readonly reason: string | null;
  /** When the gateway made the receipt (its signed timestamp). */
  readonly at: Date;
  /**
   * Recorded only on a message that holds no receipt yet: for providers whose callbacks carry no
   * signed time of their own (their final word is the only one kept, a replay of it changes nothing).
   */
  readonly firstOnly?: boolean;
}

/** Receipts of one country or range: how many, and how many said delivered. */
export interface DeliveryRate {
  readonly key: string;
  readonly receipts: number;
  readonly delivered: number;
}

export interface DeliveryRates {
  /** Every country with receipts, the most receipts first (at most `top`). */
  readonly countries: readonly DeliveryRate[];
  /** The ranges with the most receipts that did not say delivered, first (at most `top`). */
  readonly ranges: readonly DeliveryRate[];
}

/** How a claimed message's attempt ended. */
export type OutboxOutcome =
  | {
      readonly state: 'delivered';
      readonly at: Date;
      /** The gateway that accepted it and its id there (null: the provider gave none). */
      readonly gateway?: string;
      readonly gatewayMessageId?: string | null;
    }
  | { readonly state: 'pending'; readonly nextAttemptAt: Date; readonly error: string }
  | { readonly state: 'failed'; readonly error: string };

export interface OutboxStore {
  /** Takes up to `limit` due messages for `worker` until `now + leaseMs`; counts the attempt. */
  claimOutbox(worker: string, now: Date, leaseMs: number, limit: number): Promise<readonly OutboxMessage[]>;
  /**
   * Records an attempt's outcome (delivered: code and text erased, phone masked). True when the row
   * holds it: written now, or by an earlier call whose answer was lost (the same outcome, the lease
   * released), so writing an outcome again until it lands is safe. False, and nothing changed, when
   * the lease is another worker's (it ran out and someone claimed the message) or the row is gone.
   */
  finishOutbox(id: number, worker: string, outcome: OutboxOutcome): Promise<boolean>;
  listOutbox(filter: { readonly state?: OutboxState; readonly limit?: number }): Promise<readonly OutboxMessage[]>;
  /** Makes failed messages (all, or the given ids) pending again, due now; returns how many. */
  retryOutbox(ids: 'failed' | readonly number[], now: Date): Promise<number>;
  outboxCounts(): Promise<Readonly<Record<OutboxState, number>>>;
  /**
   * Records a delivery receipt on its message: `unknown` when there is no such message, `replayed`
   * when the message already holds a receipt at least as new (a replay changes nothing).
   */
  recordReceipt(receipt: DeliveryReceipt): Promise<'recorded' | 'unknown' | 'replayed'>;
  /**
   * A message as a delivery callback names it: by our id, or by the id its gateway gave it
   * (`submit_sm_resp`'s, Unifonic's MessageID); null: none such.
   */
  sentMessage(key: SentMessageKey): Promise<SentMessage | null>;
  /** Messages each gateway accepted since `since`, by gateway (`sis outbox stats`). */
  sentByGateway(since: Date): Promise<ReadonlyMap<string, number>>;
  /** Delivery rates of the receipts made since `since`, per country and range. */
  deliveryRates(since: Date, top: number): Promise<DeliveryRates>;
  /** Messages waiting for delivery and when the oldest of them was accepted (null: none), for /metrics. */
  outboxBacklog(): Promise<OutboxBacklog>;
}

export type SentMessageKey = { readonly id: number } | { readonly gateway: string; readonly gatewayMessageId: string };

/** Who took a message and when: what a provider's callback is checked against. */
export interface SentMessage {
  readonly id: number;
  readonly gateway: string | null;
  /** When a gateway accepted it; null: not yet (its callback may overtake the outbox's update). */
  readonly deliveredAt: Date | null;
}

export interface OutboxBacklog {
  readonly pending: number;
  readonly oldestPendingAt: Date | null;
}
