/**
 * What the running service depends on (the database, Redis, the SMS gateway), each in a state
 * logged once when it changes: at error or warn when a dependency fails, saying what is affected
 * and what happens meanwhile, and at warn when it is back to normal. Requests that meet a known failure
 * are not logged one by one at those levels. /readyz reads the states.
 */
import type { Logger } from '../logging/logger.js';

export interface Problem {
  /** What is wrong, after the dependency's name ("unavailable", "refusing messages"). */
  readonly what: string;
  /** What is affected, what happens meanwhile, and what to do. */
  readonly meanwhile: string;
  readonly level: 'error' | 'warn';
}

export class Dependency {
  #problem: Problem | null = null;
  #since = 0;
  #failures = 0;

  constructor(
    /** As operators read it: "database", "redis", "SMS gateway". */
    readonly name: string,
    private readonly log: Logger,
    /** True when the service cannot serve without it (/readyz then answers 503). */
    readonly required: boolean,
  ) {}

  /** The problem in force, or null while the dependency works. */
  get problem(): Problem | null {
    return this.#problem;
  }

  /** A failure: logged only when the state changes (it worked, or failed otherwise). */
  failed(problem: Problem, error?: unknown): void {
    this.#failures++;
    if (this.#problem !== null && this.#problem.what === problem.what) return;
    if (this.#problem === null) {
      this.#since = Date.now();
      this.#failures = 1;
    }
    this.#problem = problem;
    this.log[problem.level](
      { dependency: this.name, reason: reasonOf(error) },
      `${this.name} ${problem.what}: ${problem.meanwhile}`,
    );
  }

  /** A success: logs the recovery when there was a problem. Cheap otherwise (it runs per request). */
  worked(): void {
    if (this.#problem === null) return;
    const was = this.#problem;
    this.#problem = null;
    const seconds = Math.round((Date.now() - this.#since) / 1000);
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
  const code = (error as { code?: unknown }).code;
  const message =
    error.message === '' && error instanceof AggregateError
      ? error.errors.map((e) => reasonOf(e)).join('; ')
      : error.message;
  return typeof code === 'string' && !message.includes(code) ? `${message} (${code})` : message;
}

/** Every dependency of one process. */
export class DependencyHealth {
  /** Reads and writes fail: the connection is lost, or the server does not answer. */
  readonly database: Dependency;
  /** Writes fail while reads work: disk full, or the database turned read-only. */
  readonly databaseWrites: Dependency;
  readonly redis: Dependency;
  readonly smsGateway: Dependency;

  constructor(log: Logger) {
    this.database = new Dependency('database', log, true);
    this.databaseWrites = new Dependency('database writes', log, false);
    this.redis = new Dependency('Redis', log, false);
    this.smsGateway = new Dependency('SMS gateway', log, false);
  }

  /** Dependencies in trouble that the service works around ("Redis unreachable"), for /readyz. */
  degraded(): string[] {
    return [this.databaseWrites, this.redis, this.smsGateway].flatMap((d) =>
      d.problem === null ? [] : [`${d.name} ${d.problem.what}`],
    );
  }
}
