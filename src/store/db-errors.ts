/** Which database failures are worth another try, told apart from those that are not. */

/** Socket-level failures: the server is not there (yet), or went away. */
const TRANSIENT_ERRNO = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EHOSTDOWN',
  'ENETDOWN',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
  'SQLITE_BUSY',
  'SQLITE_LOCKED',
  // Our own: a query past its deadline, and calls refused while the database is known not to answer (postgres-deadlines.ts).
  'ERR_DB_TIMEOUT',
  'ERR_DB_UNAVAILABLE',
]);

/**
 * PostgreSQL SQLSTATEs that time cures: server shutting down or starting (57P01-57P03), too many
 * connections (53300), out of resources (53000, 53100, 53200), serialization failure and deadlock
 * (two instances migrating at once lose to each other once), and a read-only server where a
 * writable one was asked for (25006: a switchover's standby, until the address moves or it is promoted).
 */
const TRANSIENT_SQLSTATE = new Set([
  '57P01',
  '57P02',
  '57P03',
  '53000',
  '53100',
  '53200',
  '53300',
  '40001',
  '40P01',
  '25006',
]);

/** True for failures worth retrying: the database is unreachable, restarting, or busy. */
export function isTransientDatabaseError(error: unknown): boolean {
  if (error instanceof AggregateError) return error.errors.length > 0 && error.errors.every(isTransientDatabaseError);
  if (!(error instanceof Error)) return false;
  const code = errorCode(error);
  if (code !== '') {
    if (TRANSIENT_ERRNO.has(code) || TRANSIENT_SQLSTATE.has(code)) return true;
    if (code.startsWith('08')) return true; // connection exception class
  }
  // node-postgres reports a closed socket and a connect time-out by message only.
  if (
    /^Connection terminated|timeout exceeded when trying to connect|^Client has encountered a connection error/.test(
      error.message,
    )
  )
    return true;
  return error.cause !== undefined && error.cause !== error && isTransientDatabaseError(error.cause);
}

/**
 * A connection that was working and died (killed by an administrator, the server restarted, the
 * network reset it): a new connection may well work at once, unlike a server that refuses them.
 */
export function isConnectionLost(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (code === '57P01' || code === '57P02' || code === 'ECONNRESET' || code === 'EPIPE') return true;
  // node-postgres' words for a connection that is gone, whichever side noticed first (the server
  // ended it, the pool closed it after an error, or a query was given a client already closed).
  return /^Connection terminated|^Client has encountered a connection error|^Client was closed and is not queryable/.test(
    error.message,
  );
}

/** A failed call that tells the database's state, not the call's own fault. */
export type DatabaseCondition = 'unavailable' | 'disk full' | 'read-only';

/**
 * What a failed store call says about the database: unreachable or failing as a whole, out of
 * disk space (SQLITE_FULL, PostgreSQL 53100), or read-only (SQLITE_READONLY, a PostgreSQL standby:
 * 25006). Null for failures of the call alone (a constraint, a server's statement time-out, a
 * busy lock, too many calls waiting for a connection). Our own deadline passed is 'unavailable':
 * the server did not answer at all.
 */
export function databaseCondition(error: unknown): DatabaseCondition | null {
  for (let e = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const code = errorCode(e);
    if (code === '') {
      if (isTransientDatabaseError(e) || isConnectionLost(e)) return 'unavailable';
      continue;
    }
    if (code === 'SQLITE_FULL' || code === '53100') return 'disk full';
    if (code.startsWith('SQLITE_READONLY') || code === '25006') return 'read-only';
    if (
      code === 'ERR_STORE_NOT_READY' ||
      code === 'ERR_DB_TIMEOUT' ||
      code === 'ERR_DB_UNAVAILABLE' ||
      code.startsWith('SQLITE_IOERR') ||
      code === 'SQLITE_CANTOPEN'
    )
      return 'unavailable';
    if (code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED' || code === '40001' || code === '40P01') return null;
    if (isConnectionLost(e) || isTransientDatabaseError(e)) return 'unavailable';
  }
  return null;
}

/**
 * A driver error's code (SQLite's `SQLITE_*`, PostgreSQL's SQLSTATE, Node's errno), or ''.
 * node:sqlite says `ERR_SQLITE_ERROR` with SQLite's number in `errcode`: named here as SQLite
 * names it, the extended codes (SQLITE_READONLY_DBMOVED, …) by their primary code.
 */
export function errorCode(error: unknown): string {
  const { code, errcode } = (error ?? {}) as { code?: unknown; errcode?: unknown };
  if (code === 'ERR_SQLITE_ERROR' && typeof errcode === 'number') {
    const name = SQLITE_PRIMARY_CODES[errcode & 0xff];
    return name === undefined ? `SQLITE_${errcode}` : `SQLITE_${name}`;
  }
  return typeof code === 'string' ? code : '';
}

/** SQLite's primary result codes by number (https://sqlite.org/rescode.html). */
const SQLITE_PRIMARY_CODES: readonly (string | undefined)[] = (
  'OK ERROR INTERNAL PERM ABORT BUSY LOCKED NOMEM READONLY INTERRUPT IOERR CORRUPT NOTFOUND FULL CANTOPEN PROTOCOL ' +
  'EMPTY SCHEMA TOOBIG CONSTRAINT MISMATCH MISUSE NOLFS AUTH FORMAT RANGE NOTADB NOTICE WARNING'
).split(' ');

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
