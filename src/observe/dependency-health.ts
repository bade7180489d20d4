/**
 * What the running service depends on (the database, Redis, the SMS gateway, the legacy service),
 * each in a state logged once when it changes: one line at error or warn when the dependency starts
 * failing, saying what is affected and what happens meanwhile, and one at warn when it is back, with
 * the count of failed attempts between. Whichever part of the service notices (the rate limiter and
 * the SMS counters both use Redis; requests, the readiness ping and the pool all meet the database),
 * the instance says it once: the first failure opens the state, later ones only count, and it ends
 * when every part that failed has worked again. /readyz and sis_dependency_up read the states.
 */
import type { Logger } from '../logging/logger.js';
import { errorCode } from '../store/db-errors.js';

export interface Problem {
  /** What is wrong, after the dependency's name ("unavailable", "refusing messages"). */
  readonly what: string;
  /** What happens meanwhile and what to do (after what each part that uses it says it does, see `affects`). */
  readonly meanwhile: string;
  readonly level: 'error' | 'warn';
}

/** The part of the service that noticed, when several use one dependency through their own connections. */
const WHOLE = '';

/**
 * How long a dependency must go without a failure once it worked again before it is back (and its
 * line written). A PostgreSQL stop ends its connections one by one over a few milliseconds, so a
 * query on one not yet ended succeeds between two that fail (CI saw the database "back after 0 s"
 * and lost again 7 ms later); a flapping network does the same. Failures within the spell belong
 * to the outage already logged.
 */
export const RECOVERY_SETTLE_MS = 1000;

export class Dependency {
  #problem: Problem | null = null;
  /** Parts that saw it fail and have not seen it work since (each its own connection). */
  readonly #failing = new Set<string>();
  readonly #effects: string[] = [];
  #since = 0;
  /** When it last worked again after failing (ms since the epoch): the end of the last outage, or of this one if it holds. */
  #recoveredAt = 0;
  /** Set while it works again, until RECOVERY_SETTLE_MS pass without a failure. */
  #settling: NodeJS.Timeout | undefined;
  #failures = 0;

  constructor(
    /** As operators read it: "database", "Redis", "SMS gateway", "legacy service". */
    readonly name: string,
    private readonly log: Logger,
  ) {}

  /** The problem in force (until the dependency has worked for the settling spell), or null. */
  get problem(): Problem | null {
    return this.#problem;
  }

  /**
   * Says what a part of the service does while the dependency fails ("rate limits (SIS_RATE_LIMIT)
   * are not enforced"): the one line names every part's, whichever part noticed first.
   */
  affects(effect: string): void {
    if (!this.#effects.includes(effect)) this.#effects.push(effect);
  }

  /**
   * A failure, seen by `part` (a connection of its own; the whole dependency when left out):
   * logged only when the dependency was working. A different problem meanwhile replaces the one
   * /readyz names, without a line. `startedAt` (ms since the epoch): when the call began; one begun
   * before the dependency worked again, failing after, is no sign of a new failure (it met the
   * dependency as it was then).
   */
  failed(problem: Problem, error?: unknown, part: string = WHOLE, startedAt?: number): void {
    const working = this.#problem === null || this.#settling !== undefined;
    if (working && startedAt !== undefined && startedAt < this.#recoveredAt) return;
    this.#failures++;
    this.#failing.add(part);
    if (this.#settling !== undefined) {
      // It failed again within the spell: the same outage goes on, without a line.
      clearTimeout(this.#settling);
      this.#settling = undefined;
    }
    const was = this.#problem;
    this.#problem = problem;
    if (was !== null) return;
    this.#since = Date.now();
    this.#failures = 1;
    const effects = this.#effects.length === 0 ? '' : `${this.#effects.join('; ')}; `;
    this.log[problem.level](
      { dependency: this.name, reason: reasonOf(error) },
      `${this.name} ${problem.what}: ${effects}${problem.meanwhile}`,
    );
  }

  /**
   * A success seen by `part`: once no part sees a failure, the dependency is back if nothing fails
   * for RECOVERY_SETTLE_MS, and the line says so. Cheap otherwise (it runs per request).
   * `startedAt` (ms since the epoch): when the call began; one begun before the failure did is no
   * sign of recovery (it was answered by the dependency as it was then).
   */
  worked(part: string = WHOLE, startedAt?: number): void {
    if (this.#problem === null || this.#settling !== undefined) return;
    if (startedAt !== undefined && startedAt < this.#since) return;
    this.#failing.delete(part);
    if (this.#failing.size > 0) return;
    this.#recoveredAt = Date.now();
    this.#settling = setTimeout(() => this.#back(), RECOVERY_SETTLE_MS);
    this.#settling.unref();
  }

  /** The settling spell passed without a failure: the outage ended when it first worked again. */
  #back(): void {
    const was = this.#problem!;
    this.#settling = undefined;
    this.#problem = null;
    const seconds = Math.round((this.#recoveredAt - this.#since) / 1000);
    this.log.warn(
      { dependency: this.name, was: was.what, downSeconds: seconds, failures: this.#failures },
      `${this.name} back to normal after ${seconds} s (${this.#failures} failed ${this.#failures === 1 ? 'call' : 'calls'} meanwhile)`,
    );
  }
}

/** A failure's reason for the log line: its message and code, never its stack or values. */
function reasonOf(error: unknown): string | undefined {
  if (error === undefined) return undefined;
  if (!(error instanceof Error)) return String(error);
  const code = errorCode(error);
  const message =
    error.message === '' && error instanceof AggregateError
      ? error.errors.map((e) => reasonOf(e)).join('; ')
      : error.message;
  return code !== '' && !message.includes(code) ? `${message} (${code})` : message;
}

/** Redis away, whichever of its users noticed: each says what it does meanwhile (`affects`). */
export const REDIS_UNREACHABLE: Problem = {
  what: 'unreachable',
  level: 'warn',
  meanwhile: 'it is retried; check SIS_REDIS_URL and the Redis server',
};

/** Every dependency of one process. */
export class DependencyHealth {
  /** Reads and writes fail: the connection is lost, or the server does not answer. */
  readonly database: Dependency;
  /** Writes fail while reads work: disk full, or the database turned read-only. */
  readonly databaseWrites: Dependency;
  readonly redis: Dependency;
  readonly smsGateway: Dependency;
  /** The legacy ASMX service beside this one (SIS_SHADOW), when it does not answer. */
  readonly legacy: Dependency;
  /** This host's clock against the database server's, when they differ enough to tell (app.ts); /readyz says it. */
  clock: string | null = null;

  constructor(log: Logger) {
    this.database = new Dependency('database', log);
    this.databaseWrites = new Dependency('database writes', log);
    this.redis = new Dependency('Redis', log);
    this.smsGateway = new Dependency('SMS gateway', log);
    this.legacy = new Dependency('legacy service', log);
  }

  /**
   * Dependencies in trouble, for /readyz. None makes the instance unready: each is shared by every
   * instance, so routing elsewhere would not help, and the service works around each (answers
   * reads it knows while the database does not answer, docs/operations.md).
   */
  degraded(): string[] {
    return [this.database, this.databaseWrites, this.redis, this.smsGateway, this.legacy].flatMap((d) =>
      d.problem === null ? [] : [`${d.name} ${d.problem.what}`],
    );
  }
}
