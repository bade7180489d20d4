import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { noteDatabaseFailure } from '../observe/database-watch.js';
import type { DependencyHealth, Problem } from '../observe/dependency-health.js';
import type { OutboxMessage, OutboxStore } from '../store/outbox-types.js';
import { maskPhone } from '../store/phone-mask.js';
import { GatewayError } from './gateways/gateway.js';
import type { Gateway } from './gateways/gateway.js';

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
  /** Where the gateway's and the database's state changes go (logged once each); per-message lines are then at debug. */
  readonly health?: DependencyHealth;
}

/**
 * How a gateway's attempt ended: sent; refused or failed, and the next gateway of SIS_SMS_GATEWAY
 * tried (fallback); failed, the message tried again later (retry); or failed for good.
 */
export const DELIVERY_RESULTS = ['delivered', 'fallback', 'retry', 'failed'] as const;
export type DeliveryResult = (typeof DELIVERY_RESULTS)[number];

/** Failed attempts in a row, over all messages, that make the gateway "refusing": one bad number is not an outage. */
const REFUSING_AFTER = 3;

const REFUSING: Problem = {
  what: 'refusing messages',
  level: 'error',
  meanwhile:
    'codes accepted by AuthCode are not delivered: they wait in the outbox and are retried with back-off (after SIS_OUTBOX_MAX_ATTEMPTS a message is failed; `sis outbox retry --failed` sends those again); check the gateway and its settings (SIS_SMS_GATEWAY; `sis check`)',
};

/**
 * A gateway refusing our account or configuration (credentials, credit, a sender id, a message it
 * takes from no one): every code fails alike, so one such answer is enough. Its part of the state
 * is the gateway's own (`account:<name>`): it ends when that gateway takes a message again.
 */
const accountRefusing = (gateway: string): Problem => ({
  what: `refusing messages: ${gateway} refuses the account or its configuration, not the number`,
  level: 'error',
  meanwhile: `no code goes out through ${gateway} until an operator fixes the account (its credentials, credit, sender id: SIS_SMS_SENDER_ID, the template; \`sis check\`); the next gateway of SIS_SMS_GATEWAY is tried, and codes no gateway took wait in the outbox, tried again at least every ${ACCOUNT_RETRY_MS / 1000} s for ${ACCOUNT_WAIT_MS / 60_000} minutes, so they go out once it is fixed`,
});

/** How long a message refused for a gateway's account is tried again (then failed): a parent waits no longer for a code. */
export const ACCOUNT_WAIT_MS = 15 * 60_000;
/** Its next attempt at most this far off: once the account is fixed, the waiting codes go out within it. */
export const ACCOUNT_RETRY_MS = 30_000;

/** How `sis outbox` tells a refused account from a refused number: the start of the message's error. */
export const REFUSED_ACCOUNT = 'account refused: ';
export const REFUSED_NUMBER = 'number refused: ';

export const DEFAULT_OUTBOX_OPTIONS: OutboxWorkerOptions = {
  pollMs: 1000,
  leaseMs: 30_000,
  maxAttempts: 8,
  backoffMs: (attempt) => Math.min(2 ** (attempt - 1) * 1000, 5 * 60_000),
  batch: 20,
};

/**
 * Delivers the outbox: claims due messages, sends each through the gateways in order (the next
 * one only when the one before refused or could not be reached: never after one took it, or may
 * have), records delivered (with the gateway that took it), pending (with back-off) or failed.
 * Runs in every instance; leases and locked claims keep two instances from sending one message
 * twice. Codes are never logged; phones only masked.
 */
export class OutboxWorker {
  private readonly id = `${process.pid}-${randomBytes(3).toString('hex')}`;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  /** Failed attempts since the last delivery. */
  private failedInARow = 0;
  /** Attempts by gateway and result, for /metrics. */
  readonly deliveries: ReadonlyMap<string, Map<DeliveryResult, number>>;
  /** By gateway: 1 while its last answer refused the account or configuration (sis_sms_gateway_account_refused). */
  readonly accountRefused: Map<string, number>;

  constructor(
    private readonly store: OutboxStore,
    private readonly gateways: readonly Gateway[],
    private readonly log: Logger,
    private readonly options: OutboxWorkerOptions = DEFAULT_OUTBOX_OPTIONS,
    private readonly now: () => Date = () => new Date(),
  ) {
    this.deliveries = new Map(gateways.map((g) => [g.name, new Map(DELIVERY_RESULTS.map((r) => [r, 0]))]));
    this.accountRefused = new Map(gateways.map((g) => [g.name, 0]));
  }

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
      .catch((err: unknown) => {
        // A database that is down is reported once, by its state; not at every poll.
        const health = this.options.health;
        if (health !== undefined && noteDatabaseFailure(health, err))
          this.log.debug({ err }, 'outbox: delivery round failed');
        else this.log.error({ err }, 'outbox: delivery round failed');
      })
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
    const errors: string[] = [];
    // Whether every gateway tried so far refused the message for good: then no later attempt.
    let forGood = true;
    // Whether a gateway refused the account: then the message waits for an operator's fix.
    let account = false;
    for (const [i, gateway] of this.gateways.entries()) {
      let gatewayMessageId: string | null;
      try {
        ({ gatewayMessageId } = await gateway.send(message));
      } catch (err) {
        const text = err instanceof Error ? err.message : String(err);
        errors.push(this.gateways.length > 1 ? `${gateway.name}: ${text}` : text);
        forGood &&= err instanceof GatewayError && err.kind === 'permanent';
        if (err instanceof GatewayError && err.kind === 'account') {
          account = true;
          this.accountRefused.set(gateway.name, 1);
          this.options.health?.smsGateway.failed(accountRefusing(gateway.name), err, `account:${gateway.name}`);
        }
        // The next gateway only when this one surely did not take it: a code is never sent twice.
        const next = i + 1 < this.gateways.length && err instanceof GatewayError && err.kind !== 'unsure';
        if (next) {
          this.count(gateway.name, 'fallback');
          this.log.warn(
            { outboxId: message.id, phone, gateway: gateway.name, error: text },
            'outbox: gateway did not take the message; trying the next',
          );
          continue;
        }
        return this.failed(message, phone, gateway.name, errors.join('; '), forGood, account);
      }
      this.failedInARow = 0;
      this.count(gateway.name, 'delivered');
      this.accountRefused.set(gateway.name, 0);
      this.options.health?.smsGateway.worked();
      this.options.health?.smsGateway.worked(`account:${gateway.name}`);
      await this.store.finishOutbox(message.id, this.id, {
        state: 'delivered',
        at: this.now(),
        gateway: gateway.name,
        gatewayMessageId,
      });
      this.log.info(
        { outboxId: message.id, phone, attempts: message.attempts, gateway: gateway.name },
        'outbox: delivered',
      );
      return;
    }
  }

  private count(gateway: string, result: DeliveryResult): void {
    const counts = this.deliveries.get(gateway);
    counts?.set(result, (counts.get(result) ?? 0) + 1);
  }

  /**
   * Records a failed attempt (the last gateway tried): another later, or failed for good, at once
   * when every gateway tried refused it for good (`forGood`: an invalid or unroutable number). One
   * a gateway refused for its account (`account`) is tried again, beyond SIS_OUTBOX_MAX_ATTEMPTS,
   * while it is younger than ACCOUNT_WAIT_MS, at least every ACCOUNT_RETRY_MS.
   */
  private async failed(
    message: OutboxMessage,
    phone: string,
    gateway: string,
    text: string,
    forGood: boolean,
    account: boolean,
  ): Promise<void> {
    const error = `${account ? REFUSED_ACCOUNT : forGood ? REFUSED_NUMBER : ''}${text}`;
    const err = new Error(error);
    const health = this.options.health;
    // A number refused for good is the number's fault, not the gateway's: not a step towards "refusing".
    if (health !== undefined && !forGood && ++this.failedInARow >= REFUSING_AFTER)
      health.smsGateway.failed(REFUSING, err);
    const waiting = account && this.now().getTime() - message.createdAt.getTime() < ACCOUNT_WAIT_MS;
    if (forGood || (!waiting && message.attempts >= this.options.maxAttempts)) {
      this.count(gateway, 'failed');
      await this.store.finishOutbox(message.id, this.id, { state: 'failed', error });
      this.log.error(
        { outboxId: message.id, phone, attempts: message.attempts, error },
        forGood ? 'outbox: refused for good by the gateway; not retried' : 'outbox: failed for good',
      );
      return;
    }
    this.count(gateway, 'retry');
    const backoff = this.options.backoffMs(message.attempts);
    const nextAttemptAt = new Date(this.now().getTime() + (account ? Math.min(backoff, ACCOUNT_RETRY_MS) : backoff));
    await this.store.finishOutbox(message.id, this.id, { state: 'pending', nextAttemptAt, error });
    // Each retry at warn, unless the gateway's state says it (once, when it turns to refusing).
    const level = health === undefined ? 'warn' : 'debug';
    this.log[level](
      { outboxId: message.id, phone, attempts: message.attempts, error, nextAttemptAt },
      'outbox: will retry',
    );
  }
}
