/**
 * The database's state as the service's own calls find it: a call that fails because the database
 * is unreachable, full or read-only changes the state (logged once, dependency-health.ts);
 * a call that succeeds ends it.
 */
import type { Logger } from '../logging/logger.js';
import { databaseCondition } from '../store/db-errors.js';
import type { StoreObserver } from './counted-store.js';
import type { DependencyHealth, Problem } from './dependency-health.js';

const UNAVAILABLE: Problem = {
  what: 'unavailable',
  level: 'error',
  meanwhile:
    'reads this instance answered lately are answered the same (SIS_STALE_IF_ERROR_MS), other requests with a server fault (HTTP 500); /readyz stays 200 (every instance shares the database); no request waits for it meanwhile (PostgreSQL: one probe at a time finds out when it is back); check the database server and the network',
};
const DISK_FULL: Problem = {
  what: 'failing (disk full)',
  level: 'error',
  meanwhile:
    'AuthCode (every write) is answered with a server fault, reads are still answered; free space on the disk that holds the database',
};
const READ_ONLY: Problem = {
  what: 'failing (the database is read-only)',
  level: 'error',
  meanwhile:
    'AuthCode (every write) is answered with a server fault, reads are still answered; point SIS_DATABASE_URL at a writable database (a PostgreSQL primary, not a standby) or check the file system',
};

/**
 * Records a failed call's meaning for the database; true when it was the database's state (already
 * logged). `startedAt`: when the call began, where known (a call begun before the database was
 * back tells nothing new when it fails after).
 */
export function noteDatabaseFailure(health: DependencyHealth, error: unknown, startedAt?: number): boolean {
  switch (databaseCondition(error)) {
    case 'unavailable':
      health.database.failed(UNAVAILABLE, error, undefined, startedAt);
      return true;
    case 'disk full':
      health.databaseWrites.failed(DISK_FULL, error, undefined, startedAt);
      return true;
    case 'read-only':
      health.databaseWrites.failed(READ_ONLY, error, undefined, startedAt);
      return true;
    default:
      return false;
  }
}

/**
 * A writable server found again after a read-only one (PostgreSQL, a switchover's end): the writes'
 * read-only state ends (after its settling second), not a full disk's.
 */
export function noteDatabaseWritable(health: DependencyHealth): void {
  if (health.databaseWrites.problem === READ_ONLY) health.databaseWrites.worked();
}

/** The database did not answer (a readiness ping begun at `startedAt`): unavailable, whatever the error. */
export function noteDatabaseDown(health: DependencyHealth, error: unknown, startedAt: number): void {
  if (databaseCondition(error) !== 'unavailable' || !noteDatabaseFailure(health, error, startedAt))
    health.database.failed(UNAVAILABLE, error, undefined, startedAt);
}

/** The store's calls watched, and `wrote` for an operation that writes and succeeded (OperationContext.onWritten). */
export function watchDatabase(health: DependencyHealth): StoreObserver & { wrote(): void } {
  return {
    succeeded(startedAt) {
      health.database.worked(undefined, startedAt);
    },
    // A write's success carries no start (taking one in the dispatcher cost about 9 k instructions
    // a read, bench/RESULTS.md): one begun before a failure may open the settling second, and the
    // failures that follow within it keep the outage as it was (dependency-health.ts).
    wrote() {
      health.database.worked();
      health.databaseWrites.worked();
    },
    failed(error, startedAt) {
      noteDatabaseFailure(health, error, startedAt);
    },
  };
}

/** How far apart this host's clock and the database server's may be before the service says so. */
const CLOCK_TELL_MS = 1000;

/**
 * Tells, once at start, a large difference between this host's clock and the database server's:
 * nothing is refused for it (AuthCode's deadline is measured on the server's clock alone,
 * migration 13), but the times this instance writes (auth_codes.created_at, the outbox's, the log's)
 * differ from the database's own. /readyz says it too.
 */
export async function tellClockDifference(
  store: { serverClockOffsetMs(): Promise<number | null> },
  health: DependencyHealth,
  log: Logger,
): Promise<void> {
  let offset: number | null;
  try {
    offset = await store.serverClockOffsetMs();
  } catch {
    return; // the database went again; its state says so
  }
  if (offset === null || Math.abs(offset) < CLOCK_TELL_MS) return;
  health.clock = `this host's clock is ${(Math.abs(offset) / 1000).toFixed(1)} s ${offset > 0 ? 'behind' : 'ahead of'} the database server's`;
  log.warn(
    { clockOffsetMs: offset },
    `${health.clock}: no write is refused for it (AuthCode's deadline is measured on the server's clock), but the times this instance writes differ from the database's; synchronise the clocks (NTP: chrony, systemd-timesyncd)`,
  );
}
