/**
 * Start-up failures, mapped once to what an operator meets: one line on stderr per problem (the
 * thing and what to do), one log entry (the stack only at LOG_LEVEL=debug) and an exit status
 * from the table below (docs/operations.md lists it). The error classes are in
 * src/errors/startup-errors.ts; settings problems are ConfigError.
 */
import { ConfigError } from '../config/config.js';
import { StartupError } from '../errors/startup-errors.js';
import type { Logger } from '../logging/logger.js';
import { DatabaseUrlError } from '../store/open/database-url.js';

/** Exit statuses; the numbers are sysexits.h's, which systemd also knows by name. */
export const EXIT_STATUS = {
  /** Anything not foreseen below (and requests cut at shutdown, the database lost for good). */
  failure: 1,
  usage: 2,
  /** EX_DATAERR: the database is not usable, or newer than the program. */
  dataError: 65,
  /** EX_UNAVAILABLE: the listening address cannot be bound. */
  unavailable: 69,
  /** EX_NOPERM: a path the service's user may not read or write; PostgreSQL refused the login. */
  noPermission: 77,
  /** EX_CONFIG: a setting is wrong (TLS files included), or names a database that does not exist. */
  config: 78,
} as const;

const STATUS_BY_CODE: Readonly<Record<string, number>> = {
  ERR_CONFIG: EXIT_STATUS.config,
  ERR_DATABASE_URL: EXIT_STATUS.config,
  ERR_DB_MISSING: EXIT_STATUS.config,
  ERR_DB_UNUSABLE: EXIT_STATUS.dataError,
  ERR_DB_SCHEMA_NEWER: EXIT_STATUS.dataError,
  ERR_DB_ACCESS: EXIT_STATUS.noPermission,
  ERR_DB_LOGIN: EXIT_STATUS.noPermission,
  ERR_ADDRESS: EXIT_STATUS.unavailable,
};

/** What is shown for one failure; plain data, so a cluster worker can hand it to its primary. */
export interface StartupFailure {
  readonly code: string;
  readonly exitStatus: number;
  /** One line each, without the command prefix. */
  readonly lines: readonly string[];
}

/** A failure described elsewhere (in a cluster worker), thrown on in the primary. */
export class RelayedStartupFailure extends Error {
  constructor(readonly failure: StartupFailure) {
    super(failure.lines.join('; '));
    this.name = 'RelayedStartupFailure';
  }
}

export function describeStartupFailure(error: unknown): StartupFailure {
  if (error instanceof RelayedStartupFailure) return error.failure;
  if (error instanceof ConfigError) {
    return {
      code: error.code,
      exitStatus: EXIT_STATUS.config,
      lines: error.problems.map((p) => `invalid configuration: ${p}`),
    };
  }
  if (error instanceof DatabaseUrlError) {
    return {
      code: error.code,
      exitStatus: EXIT_STATUS.config,
      lines: [`invalid configuration: SIS_DATABASE_URL: ${error.message}`],
    };
  }
  if (error instanceof StartupError) {
    return {
      code: error.code,
      exitStatus: STATUS_BY_CODE[error.code] ?? EXIT_STATUS.failure,
      lines: [`cannot start: ${error.message}`],
    };
  }
  return {
    code: 'ERR_STARTUP',
    exitStatus: EXIT_STATUS.failure,
    lines: [`cannot start: ${oneLine(messageOf(error))} (run with LOG_LEVEL=debug for details)`],
  };
}

export interface ReportTarget {
  /** Where the log entry goes (none before the configuration is known). */
  readonly log: Logger | null;
  readonly stderr: NodeJS.WritableStream;
  /** `sis serve`. */
  readonly command: string;
}

/** Writes the lines and the log entry; returns the exit status. */
export function reportStartupFailure(error: unknown, target: ReportTarget): number {
  const failure = describeStartupFailure(error);
  for (const line of failure.lines) target.stderr.write(`${target.command}: ${line}\n`);
  const { log } = target;
  if (log !== null) {
    // The stack is for whoever debugs, not for the operator's log: only at debug.
    const details = log.isLevelEnabled('debug') && !(error instanceof RelayedStartupFailure) ? { err: error } : {};
    log.fatal({ errorCode: failure.code, exitStatus: failure.exitStatus, ...details }, failure.lines.join('; '));
  }
  return failure.exitStatus;
}

function messageOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  if (error.message === '' && error instanceof AggregateError) return error.errors.map(messageOf).join('; ');
  return error.message === '' ? ((error as NodeJS.ErrnoException).code ?? error.name) : error.message;
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ');
}
