import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { noteDatabaseFailure } from '../observe/database-watch.js';
import type { DependencyHealth, Problem } from '../observe/dependency-health.js';
import type { OutboxMessage, OutboxOutcome, OutboxStore } from '../store/outbox-types.js';
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

/** An attempt's outcome whose write has not landed yet, and what to log once it has. */
interface Unwritten {
  readonly outcome: OutboxOutcome;
  readonly written: (late: boolean) => void;
}

/**
 * Delivers the outbox: claims due messages, sends each through the gateways in order (the next
 * one only when the one before refused or could not be reached: never after one took it, or may
 * have), records delivered (with the gateway that took it), pending (with back-off) or failed.
 * Runs in every instance; leases and locked claims keep two instances from sending one message
 * twice. Codes are never logged; phones only masked.
 *
 * An outcome whose write fails (a PostgreSQL switchover: the old primary answers 25006; the
 * database unreachable; SQLite's disk full) is kept here and written again, before anything new is
 * claimed, at every round until it lands: the row stays leased to this worker meanwhile, this
 * worker claims nothing (so never its own message again), and the lease keeps other instances off
 * it until it runs out. What this cannot cover: the process ending before the write lands, or
 * failing to write for longer than the lease while another instance can; the message is then
 * claimed again when the lease has run out and sent again (at least once, never lost).
 */
export class OutboxWorker {
  private readonly id = `${process.pid}-${randomBytes(3).toString('hex')}`;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  /** Failed attempts since the last delivery. */
  private failedInARow = 0;
  /** Outcomes known here whose write has not landed yet, by message id. */
  private readonly unwritten = new Map<number, Unwritten>();
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

  /**
   * Stops polling and waits for the delivery in progress; outcomes still unwritten are tried once
   * more, and those that do not land are named (their messages are sent again after their lease).
   */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
    if (this.unwritten.size === 0) return;
    await this.writeUnwritten().catch(() => undefined);
    if (this.unwritten.size > 0)
      this.log.error(
        { outboxIds: [...this.unwritten.keys()] },
        'outbox: stopping with attempt outcomes the database did not take: these messages are claimed and sent again once their lease runs out',
      );
  }

  private async drain(): Promise<void> {
    for (;;) {
      // What is known and unwritten lands first; until it has, nothing new is claimed (a message
      // of ours whose lease ran out included: its outcome is known here, it is not sent again).
      await this.writeUnwritten();
      const claimed = await this.store.claimOutbox(this.id, this.now(), this.options.leaseMs, this.options.batch);
      if (claimed.length === 0) return;
      await Promise.all(claimed.map((m) => this.attempt(m)));
      if (this.stopped) return;
    }
  }

  /** Writes the kept outcomes again; throws the first failure when any is still unwritten. */
  private async writeUnwritten(): Promise<void> {
    if (this.unwritten.size === 0) return;
    const results = await Promise.allSettled(
      [...this.unwritten].map(async ([id, { outcome, written }]) => {
        const landed = await this.store.finishOutbox(id, this.id, outcome);
        this.unwritten.delete(id);
        // A write landed: the database takes writes again (its state's line, if it had one).
        this.options.health?.database.worked();
        this.options.health?.databaseWrites.worked();
        if (landed) written(true);
        else this.lost(id, outcome);
      }),
    );
    const failure = results.find((r) => r.status === 'rejected');
    if (failure !== undefined) throw failure.reason;
  }

  /**
   * Writes an attempt's outcome; when the write fails, keeps it to write again (writeUnwritten),
   * never to send again. `written` logs it once it has landed.
   */
  private async record(id: number, outcome: OutboxOutcome, written: (late: boolean) => void): Promise<void> {
    let landed: boolean;
    try {
      landed = await this.store.finishOutbox(id, this.id, outcome);
    } catch (err) {
      this.unwritten.set(id, { outcome, written });
      const health = this.options.health;
      // The database's state is logged once, by its own line; this message's at debug then.
      const level = health !== undefined && noteDatabaseFailure(health, err) ? 'debug' : 'warn';
      this.log[level](
        { outboxId: id, outcome: outcome.state, err },
        "outbox: the attempt's outcome could not be written; kept and written again until it lands (the message is not sent again)",
      );
      return;
    }
    if (landed) written(false);
    else this.lost(id, outcome);
  }

  /** The lease ran out before the outcome was written and another worker claimed the message. */
  private lost(id: number, outcome: OutboxOutcome): void {
    this.log[outcome.state === 'delivered' ? 'warn' : 'debug'](
      { outboxId: id, outcome: outcome.state },
      'outbox: the lease ran out before the outcome was written, and another worker has the message (it may be sent again)',
    );
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
      const outcome: OutboxOutcome = { state: 'delivered', at: this.now(), gateway: gateway.name, gatewayMessageId };
      return this.record(message.id, outcome, (late) =>
        this.log.info(
          {
            outboxId: message.id,
            phone,
            attempts: message.attempts,
            gateway: gateway.name,
            ...(late ? { writtenLate: true } : {}),
          },
          'outbox: delivered',
        ),
      );
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
      return this.record(message.id, { state: 'failed', error }, () =>
        this.log.error(
          { outboxId: message.id, phone, attempts: message.attempts, error },
          forGood ? 'outbox: refused for good by the gateway; not retried' : 'outbox: failed for good',
        ),
      );
    }
    this.count(gateway, 'retry');
    const backoff = this.options.backoffMs(message.attempts);
    const nextAttemptAt = new Date(this.now().getTime() + (account ? Math.min(backoff, ACCOUNT_RETRY_MS) : backoff));
    // Each retry at warn, unless the gateway's state says it (once, when it turns to refusing).
    const level = health === undefined ? 'warn' : 'debug';
    await this.record(message.id, { state: 'pending', nextAttemptAt, error }, () =>
      this.log[level](
        { outboxId: message.id, phone, attempts: message.attempts, error, nextAttemptAt },
        'outbox: will retry',
      ),
    );
  }
}
