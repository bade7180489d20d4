/**
 * Retention: removes accepted codes, and delivered or failed messages, once older than their
 * retention (pending messages never), erases the texts of delivered messages stored before texts
 * were erased at delivery, and runs the steps other features add (the shadow's kept records,
 * `addStep`). Every service process runs rounds (one at start, then every minute); `sis prune`
 * runs one on demand.
 *
 * A backlog goes in small batches, each its own short transaction, with a pause after each of a
 * few times what the batch took (at least `minPauseMs`): the write lock is never held for more than
 * a batch, and pruning takes a bounded share of the database's time however large the backlog.
 *
 * A batch refused because the database is read-only or unavailable (a PostgreSQL switchover, a
 * restart) is tried again, on another connection, for up to `retryMs` (write-retry.ts): each batch
 * is one statement or transaction, so running it again is safe; the round goes on from there.
 */
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import type { Config } from '../config/config.js';
import { AUTH_CODE_WINDOW_MS } from '../store/auth-code-window.js';
import { StoreNotReadyError } from '../store/open/background-store.js';
import type { RetentionStore, RetentionTable } from '../store/retention-types.js';
import { RETENTION_TABLES } from '../store/retention-types.js';
import { retryWrite } from '../store/write-retry.js';

export interface RetentionPolicy {
  /** How long each table's rows are kept, in milliseconds; 0: forever. */
  readonly keepMs: Readonly<Record<RetentionTable, number>>;
  /** Codes younger than this are never removed, whatever is asked: the hourly limit counts them (0 when it is off). */
  readonly authCodeFloorMs: number;
}

export interface PrunerOptions {
  /** Between the end of a round and the start of the next. */
  readonly intervalMs: number;
  /** Rows per batch (one transaction). */
  readonly batchRows: number;
  /** The pause after a full batch is this many times the batch's duration... */
  readonly pauseFactor: number;
  /** ...and at least this long. */
  readonly minPauseMs: number;
  /** How long a call refused because the database is read-only or unavailable is tried again (0: not; default 30 s). */
  readonly retryMs?: number;
}

/** Half the interval: a switchover's refused writes are over well within it (docs/operations.md). */
const RETRY_MS = 30_000;

export const DEFAULT_PRUNER_OPTIONS: PrunerOptions = {
  intervalMs: 60_000,
  batchRows: 500,
  pauseFactor: 4,
  minPauseMs: 10,
  retryMs: RETRY_MS,
};

/** What a round did to one table: rows created before `before` removed (or, in a dry run, to remove). */
export interface TablePrune {
  readonly before: Date;
  readonly removed: number;
}

export interface PruneReport {
  /** Null for a table kept forever (its retention is 0 and no `olderThanMs` was given). */
  readonly tables: Readonly<Record<RetentionTable, TablePrune | null>>;
  /** Delivered messages whose text was erased now (or, in a dry run, still to erase). */
  readonly erased: number;
}

export interface PruneRequest {
  /** Instead of the configured retentions, for both tables (the auth-code floor still holds). */
  readonly olderThanMs?: number;
  /** Count what would be removed and erased; change nothing. */
  readonly dryRun?: boolean;
}

/**
 * Another set of rows with a retention, pruned with each round (the shadow's kept differences and
 * counts): `prune` removes at most `limit` rows older than its retention at `now`, returns how many.
 */
export interface PruneStep {
  readonly name: string;
  prune(now: Date, limit: number): Promise<number>;
}

export class Pruner {
  /** Rows this process removed, per table (for /metrics). */
  readonly pruned: Record<RetentionTable, number> = { auth_codes: 0, outbox: 0 };
  /** Delivered texts this pruner erased. */
  erasedTexts = 0;
  /** Rows in each table, counted at the end of the last round; null before the first. */
  kept: Readonly<Record<RetentionTable, number>> | null = null;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  private endPause: (() => void) | null = null;
  /** Ends the waits of a call being tried again (stop). */
  private stopping = new AbortController();
  private readonly steps: PruneStep[] = [];

  constructor(
    private readonly store: RetentionStore,
    private readonly policy: RetentionPolicy,
    private readonly log: Logger | null,
    private readonly options: PrunerOptions = DEFAULT_PRUNER_OPTIONS,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** Each table's cut-off for a round at `now`, or null when the table is kept forever. */
  cutoffs(now: Date, olderThanMs?: number): Readonly<Record<RetentionTable, Date | null>> {
    const cutoff = (table: RetentionTable): Date | null => {
      const keepMs = olderThanMs ?? this.policy.keepMs[table];
      if (olderThanMs === undefined && keepMs === 0) return null;
      const floorMs = table === 'auth_codes' ? this.policy.authCodeFloorMs : 0;
      return new Date(now.getTime() - Math.max(keepMs, floorMs));
    };
    return { auth_codes: cutoff('auth_codes'), outbox: cutoff('outbox') };
  }

  /** One round: every table to its cut-off, in batches, then the leftover delivered texts. */
  async prune(request: PruneRequest = {}): Promise<PruneReport> {
    const dryRun = request.dryRun === true;
    const cutoffs = this.cutoffs(this.now(), request.olderThanMs);
    const tables: Record<RetentionTable, TablePrune | null> = { auth_codes: null, outbox: null };
    for (const table of RETENTION_TABLES) {
      const before = cutoffs[table];
      if (before === null) continue;
      const removed = dryRun
        ? await this.tried(() => this.store.countPrunable(table, before))
        : await this.batches(
            () => this.store.pruneBatch(table, before, this.options.batchRows),
            (n) => (this.pruned[table] += n),
          );
      tables[table] = { before, removed };
    }
    const erased = dryRun
      ? await this.tried(() => this.store.countUnerased())
      : await this.batches(
          () => this.store.eraseDelivered(this.options.batchRows),
          (n) => (this.erasedTexts += n),
        );
    return { tables, erased };
  }

  /** Adds rows of another kind to every round (after the tables'). */
  addStep(step: PruneStep): void {
    this.steps.push(step);
  }

  /** Runs a round now, then one every `intervalMs`. */
  start(): void {
    this.stopped = false;
    this.stopping = new AbortController();
    this.schedule(0);
  }

  /** Stops between two batches and waits for the batch in progress. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.endPause?.();
    this.stopping.abort();
    await this.running;
  }

  private schedule(delayMs: number): void {
    this.timer = setTimeout(() => {
      this.running = this.round().finally(() => {
        this.running = undefined;
        if (!this.stopped) this.schedule(this.options.intervalMs);
      });
    }, delayMs);
    this.timer.unref();
  }

  private async round(): Promise<void> {
    const started = performance.now();
    try {
      const { tables, erased } = await this.prune();
      const authCodes = tables.auth_codes?.removed ?? 0;
      const outbox = tables.outbox?.removed ?? 0;
      if (authCodes + outbox + erased > 0) {
        this.log?.info(
          { authCodes, outbox, erased, ms: Math.round(performance.now() - started) },
          'retention: old rows pruned',
        );
      }
      for (const step of this.steps) {
        if (this.stopped) return;
        const now = this.now();
        const removed = await this.batches(() => step.prune(now, this.options.batchRows));
        if (removed > 0) this.log?.info({ [step.name]: removed }, 'retention: old rows pruned');
      }
      if (this.stopped) return;
      // Also after a round with nothing to prune: delivered texts erased since the last one leave the log.
      await this.tried(() => this.store.compactLog());
      const counts = await this.tried(() => this.store.retentionCounts());
      this.kept = { auth_codes: counts.auth_codes.kept, outbox: counts.outbox.kept };
    } catch (err) {
      // A database not reachable yet is reported by the store's own retries.
      if (!(err instanceof StoreNotReadyError))
        this.log?.error({ err }, 'retention: pruning round failed; trying again at the next round');
    }
  }

  /** Runs `batch` until it does less than a full batch (nothing left, or the rest is another instance's). */
  private async batches(batch: () => Promise<number>, counted?: (n: number) => void): Promise<number> {
    let total = 0;
    for (;;) {
      const started = performance.now();
      const n = await this.tried(batch);
      total += n;
      counted?.(n);
      if (n < this.options.batchRows || this.stopped) return total;
      await this.pause(Math.max(this.options.minPauseMs, (performance.now() - started) * this.options.pauseFactor));
    }
  }

  /** `call`, tried again while the database is read-only or unavailable, for up to `retryMs`. */
  private tried<T>(call: () => Promise<T>): Promise<T> {
    return retryWrite(call, {
      boundMs: this.options.retryMs ?? RETRY_MS,
      signal: this.stopping.signal,
      onRetry: ({ error, attempt, delayMs }) =>
        this.log?.debug({ err: error, attempt, delayMs }, 'retention: the database refused a batch; trying again'),
    });
  }

  /** A wait that `stop()` cuts short. */
  private async pause(ms: number): Promise<void> {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.endPause = done;
    });
    this.endPause = null;
  }
}

/** The policy the settings describe. */
export function retentionPolicy(config: Pick<Config, 'retention' | 'authCodesPerHour'>): RetentionPolicy {
  const { authCodesMs, outboxMs } = config.retention;
  return {
    keepMs: { auth_codes: authCodesMs, outbox: outboxMs },
    authCodeFloorMs: config.authCodesPerHour > 0 ? AUTH_CODE_WINDOW_MS : 0,
  };
}
