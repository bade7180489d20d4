/**
 * PostgreSQL's errors met while opening a database, turned into the start-up errors that say what is
 * wrong with what, and what to do (src/errors/startup-errors.ts). Anything else passes unchanged.
 */
import { DatabaseAccessError, DatabaseLoginError, DatabaseMissingError } from '../../errors/startup-errors.js';
import { errorCode as codeOf, errorMessage as messageOf } from '../db-errors.js';

/** Where a PostgreSQL URL points, for messages: `host:port/database`, the user and the database (never the password). */
export function postgresTarget(connectionString: string): { where: string; user: string; database: string } {
  try {
    const url = new URL(connectionString);
    const database = decodeURIComponent(url.pathname.replace(/^\//, '')) || process.env['PGDATABASE'] || '';
    const user = decodeURIComponent(url.username) || process.env['PGUSER'] || process.env['USER'] || '';
    const host = url.hostname || process.env['PGHOST'] || 'localhost';
    return { where: `${host}:${url.port || process.env['PGPORT'] || '5432'}`, user, database: database || user };
  } catch {
    return { where: 'the configured server', user: '', database: '' };
  }
}

/** PostgreSQL: a refused login, a missing database, or a privilege the service lacks. */
export function postgresOpenError(error: unknown, connectionString: string): unknown {
  const code = codeOf(error);
  if (code !== '28P01' && code !== '28000' && code !== '3D000' && code !== '42501') return error;
  const { where, user, database } = postgresTarget(connectionString);
  if (code === '3D000') return new DatabaseMissingError(where, database, user, { cause: error });
  if (code === '42501') {
    return new DatabaseAccessError(
      `PostgreSQL at ${where}: user "${user}" lacks a privilege the service needs on database "${database}" (${messageOf(error)}): ` +
        `grant it, or run \`sis migrate\` once as the database's owner`,
      { cause: error },
    );
  }
  return new DatabaseLoginError(where, user, messageOf(error), { cause: error });
}
