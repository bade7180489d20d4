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
}

/** How a claimed message's attempt ended. */
export type OutboxOutcome =
  | { readonly state: 'delivered'; readonly at: Date }
  | { readonly state: 'pending'; readonly nextAttemptAt: Date; readonly error: string }
  | { readonly state: 'failed'; readonly error: string };

export interface OutboxStore {
  /** Takes up to `limit` due messages for `worker` until `now + leaseMs`; counts the attempt. */
  claimOutbox(worker: string, now: Date, leaseMs: number, limit: number): Promise<readonly OutboxMessage[]>;
  /** Records an attempt's outcome (delivered: code and text erased, phone masked); ignored when the lease is no longer this worker's. */
  finishOutbox(id: number, worker: string, outcome: OutboxOutcome): Promise<void>;
  listOutbox(filter: { readonly state?: OutboxState; readonly limit?: number }): Promise<readonly OutboxMessage[]>;
  /** Makes failed messages (all, or the given ids) pending again, due now; returns how many. */
  retryOutbox(ids: 'failed' | readonly number[], now: Date): Promise<number>;
  outboxCounts(): Promise<Readonly<Record<OutboxState, number>>>;
  /** Messages waiting for delivery and when the oldest of them was accepted (null: none), for /metrics. */
  outboxBacklog(): Promise<OutboxBacklog>;
}

export interface OutboxBacklog {
  readonly pending: number;
  readonly oldestPendingAt: Date | null;
}
