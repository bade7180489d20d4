import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { OutboxMessage, OutboxStore } from '../store/outbox-types.js';
import { maskPhone } from '../store/phone-mask.js';
import type { Deliver } from './webhook.js';

export interface OutboxWorkerOptions {
  /** How often to look for due messages when nothing wakes the worker. */
  readonly pollMs: number;
  /** How long a claim is held: a worker that dies mid-delivery frees its messages after this. */
  readonly leaseMs: number;
  /** Attempts before a message is marked failed for good. */
  readonly maxAttempts: number;
  /** Delay before attempt n+1 (1-based n), in milliseconds. */
  readonly backoffMs: (attempt: number) => number;
  readonly batch: number;
}

export const DEFAULT_OUTBOX_OPTIONS: OutboxWorkerOptions = {
  pollMs: 1000,
  leaseMs: 30_000,
  maxAttempts: 8,
  backoffMs: (attempt) => Math.min(2 ** (attempt - 1) * 1000, 5 * 60_000),
  batch: 20,
};

/**
 * Delivers the outbox: claims due messages, sends each, records delivered, pending (with
 * back-off) or failed. Runs in every instance; leases and locked claims keep two instances from
 * sending one message twice. Codes are never logged; phones only masked.
 */
export class OutboxWorker {
  private readonly id = `${process.pid}-${randomBytes(3).toString('hex')}`;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;

  constructor(
    private readonly store: OutboxStore,
    private readonly deliver: Deliver,
    private readonly log: Logger,
    private readonly options: OutboxWorkerOptions = DEFAULT_OUTBOX_OPTIONS,
    private readonly now: () => Date = () => new Date(),
  ) {}

  start(): void {
    this.stopped = false;
    this.wake();
  }

  /** Looks for due messages now (a code was just accepted). */
  wake(): void {
    if (this.stopped) return;
    if (this.running !== undefined) {
      this.again = true;
      return;
    }
    clearTimeout(this.timer);
    this.running = this.drain()
      .catch((err: unknown) => this.log.error({ err }, 'outbox: delivery round failed'))
      .finally(() => {
        this.running = undefined;
        if (this.stopped) return;
        if (this.again) {
          this.again = false;
          this.wake();
        } else {
          this.timer = setTimeout(() => this.wake(), this.options.pollMs);
          this.timer.unref();
        }
      });
  }

  /** Stops polling and waits for the delivery in progress. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  private async drain(): Promise<void> {
    for (;;) {
      const claimed = await this.store.claimOutbox(this.id, this.now(), this.options.leaseMs, this.options.batch);
      if (claimed.length === 0) return;
      await Promise.all(claimed.map((m) => this.attempt(m)));
      if (this.stopped) return;
    }
  }

  private async attempt(message: OutboxMessage): Promise<void> {
    const phone = maskPhone(message.phone);
    try {
      await this.deliver(message);
      await this.store.finishOutbox(message.id, this.id, { state: 'delivered', at: this.now() });
      this.log.info({ outboxId: message.id, phone, attempts: message.attempts }, 'outbox: delivered');
    } catch (err) {
      const error = err instanceof Error ? err.message : String(err);
      if (message.attempts >= this.options.maxAttempts) {
        await this.store.finishOutbox(message.id, this.id, { state: 'failed', error });
        this.log.error({ outboxId: message.id, phone, attempts: message.attempts, error }, 'outbox: failed for good');
      } else {
        const nextAttemptAt = new Date(this.now().getTime() + this.options.backoffMs(message.attempts));
        await this.store.finishOutbox(message.id, this.id, { state: 'pending', nextAttemptAt, error });
        this.log.warn({ outboxId: message.id, phone, attempts: message.attempts, error, nextAttemptAt }, 'outbox: will retry');
      }
    }
  }
}
