/**
 * What stops the service at start, one class per thing an operator must fix, each with a stable
 * `code`. The message names the thing (a path, an address, a user, versions) and what to do; it
 * never holds a password. src/app/startup-failure-report.ts turns them into the one line on stderr, the
 * log entry and the exit status. (Settings are ConfigError, src/config/config.ts.)
 */
import { userInfo } from 'node:os';

export abstract class StartupError extends Error {
  abstract readonly code: string;
}

/** The SQLite file is not a database, or is damaged. */
export class DatabaseUnusableError extends StartupError {
  readonly code = 'ERR_DB_UNUSABLE';
  constructor(
    readonly path: string,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(
      `the database file ${path} is not a usable SQLite database (${detail}): restore it from a backup, ` +
        `or move it aside to start afresh with an empty database`,
      options,
    );
    this.name = 'DatabaseUnusableError';
  }
}

/** A file or directory the service's user cannot read, write or enter; or a PostgreSQL privilege missing. */
export class DatabaseAccessError extends StartupError {
  readonly code = 'ERR_DB_ACCESS';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'DatabaseAccessError';
  }
}

/** PostgreSQL refused the login (wrong password, unknown role, no pg_hba.conf entry). Not retried. */
export class DatabaseLoginError extends StartupError {
  readonly code = 'ERR_DB_LOGIN';
  constructor(where: string, user: string, detail: string, options?: { cause?: unknown }) {
    super(
      `PostgreSQL at ${where} refused the login of user "${user}" (${detail}): correct the user or password in ` +
        `SIS_DATABASE_URL (or the role's password, or pg_hba.conf); a refused login is not retried`,
      options,
    );
    this.name = 'DatabaseLoginError';
  }
}

/** The PostgreSQL database named in the URL does not exist. Not retried. */
export class DatabaseMissingError extends StartupError {
  readonly code = 'ERR_DB_MISSING';
  constructor(where: string, database: string, user: string, options?: { cause?: unknown }) {
    super(
      `PostgreSQL at ${where} has no database "${database}": create it (createdb -O ${user} ${database}) ` +
        `or correct the database name in SIS_DATABASE_URL`,
      options,
    );
    this.name = 'DatabaseMissingError';
  }
}

/** The database was migrated by a newer version of the service: refused, and left as it is. */
export class SchemaTooNewError extends StartupError {
  readonly code = 'ERR_DB_SCHEMA_NEWER';
  constructor(
    readonly databaseVersion: number,
    readonly programVersion: number,
    /** The newest migration's row: its name and when it was applied. */
    readonly newest: { readonly name: string; readonly appliedAt: string } | null,
  ) {
    const row = newest === null ? '' : ` (its migration "${newest.name}" was applied ${newest.appliedAt})`;
    super(
      `the database has schema version ${databaseVersion}, newer than this program knows (${programVersion}): ` +
        `it was migrated by a newer version of the service${row}; run that version, or restore a backup from ` +
        `before the upgrade; nothing was changed`,
    );
    this.name = 'SchemaTooNewError';
  }
}

/** The listening address cannot be bound: in use, not this machine's, or a privileged port. */
export class AddressError extends StartupError {
  readonly code = 'ERR_ADDRESS';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'AddressError';
  }
}

/** The process's user, as the permission messages name it: `nobody (uid 65534)`. */
export function processUser(): string {
  if (typeof process.getuid !== 'function') return 'the service user';
  const uid = process.getuid();
  try {
    return `${userInfo().username} (uid ${uid})`;
  } catch {
    return `uid ${uid}`; // no passwd entry for the uid (common in containers)
  }
}
