/**
 * SQLite's errors met while opening a database file, turned into the start-up errors that say what
 * is wrong with what, and what to do (src/errors/startup-errors.ts). Anything else passes unchanged.
 */
import { resolve } from 'node:path';
import { DatabaseAccessError, DatabaseUnusableError } from '../../errors/startup-errors.js';
import { errorCode as codeOf, errorMessage as messageOf } from '../db-errors.js';
import { sqliteAccessProblem } from './sqlite-access.js';
import type { SqliteNeed } from './sqlite-access.js';

/** SQLite: not a database or damaged (with the path), or a permission problem (which, where). */
export function sqliteOpenError(error: unknown, path: string, need: SqliteNeed): unknown {
  const code = codeOf(error);
  if (code === 'SQLITE_NOTADB' || code.startsWith('SQLITE_CORRUPT')) {
    return new DatabaseUnusableError(resolve(path), messageOf(error), { cause: error });
  }
  const permission =
    code === 'SQLITE_CANTOPEN' ||
    code === 'SQLITE_PERM' ||
    code.startsWith('SQLITE_READONLY') ||
    code.startsWith('SQLITE_IOERR') ||
    ['EACCES', 'EPERM', 'EROFS', 'ENOTDIR', 'EISDIR', 'EEXIST'].includes(code);
  if (permission) {
    const problem = sqliteAccessProblem(path, need);
    if (problem !== null) return new DatabaseAccessError(problem, { cause: error });
  }
  return error;
}
