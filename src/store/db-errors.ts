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
]);

/**
 * PostgreSQL SQLSTATEs that time cures: server shutting down or starting (57P01-57P03), too many
 * connections (53300), out of resources (53000, 53100, 53200), serialization failure and deadlock
 * (two instances migrating at once lose to each other once).
 */
const TRANSIENT_SQLSTATE = new Set(['57P01', '57P02', '57P03', '53000', '53100', '53200', '53300', '40001', '40P01']);

/** True for failures worth retrying: the database is unreachable, restarting, or busy. */
export function isTransientDatabaseError(error: unknown): boolean {
  if (error instanceof AggregateError) return error.errors.length > 0 && error.errors.every(isTransientDatabaseError);
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (TRANSIENT_ERRNO.has(code) || TRANSIENT_SQLSTATE.has(code)) return true;
    if (code.startsWith('08')) return true; // connection exception class
  }
  // node-postgres reports a closed socket and a connect time-out by message only.
  if (/^Connection terminated|timeout exceeded when trying to connect|^Client has encountered a connection error/.test(error.message)) return true;
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
  return /^Connection terminated unexpectedly|^Client has encountered a connection error/.test(error.message);
}
