/**
 * Why the service's user cannot use a SQLite database path: which directory or file lacks which
 * permission. SQLite itself says only "unable to open database file", or opens a file it cannot
 * write read-only without a word (the first write then fails, long after the start).
 */
import { accessSync, constants, statSync } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import { processUser } from '../../errors/startup-errors.js';

/** 'write': the service (creates the file, writes it, and its -wal and -shm companions); 'read': a reader. */
export type SqliteNeed = 'read' | 'write';

/** The first permission problem for using `path` as `need` says, in words with the fix, or null. */
export function sqliteAccessProblem(path: string, need: SqliteNeed): string | null {
  const file = resolve(path);
  const dir = dirname(file);
  const user = processUser();
  const fix = (target: string): string =>
    `give it to the user (chown ${chownName()} ${target}) or set SIS_DATABASE_URL to another path`;
  // Each directory from the root down must exist and be searchable; missing ones are created.
  for (const d of lineage(dir)) {
    const kind = kindOf(d);
    if (kind === 'missing') {
      const parent = dirname(d);
      const denied = deniedOn(parent, ['search', 'write']);
      return denied === null
        ? null
        : `the directory ${parent} is ${denied} by user ${user}, so ${d} cannot be created for the database: create it ` +
            `yourself and ${fix(d)}`;
    }
    if (kind !== 'directory') return `${d} is not a directory: set SIS_DATABASE_URL to a path in a directory`;
    if (deniedOn(d, ['search']) !== null) {
      return `the directory ${d} cannot be entered by user ${user} (no search permission): give the user execute permission on it, or set SIS_DATABASE_URL to another path`;
    }
  }
  const fileKind = kindOf(file);
  if (fileKind === 'directory')
    return `${file} is a directory, not a database file: set SIS_DATABASE_URL to a file's path`;
  const wanted: readonly Permission[] = need === 'write' ? ['read', 'write'] : ['read'];
  if (fileKind === 'file') {
    const denied = deniedOn(file, wanted);
    if (denied !== null) return `the database file ${file} is ${denied} by user ${user}: ${fix(file)}`;
  }
  // A -wal or -shm left by another user (`sis import` run as root) stops this one from writing.
  for (const companion of [`${file}-wal`, `${file}-shm`]) {
    if (kindOf(companion) !== 'file') continue;
    const denied = deniedOn(companion, ['read', 'write']);
    if (denied !== null)
      return `SQLite's companion file ${companion} is ${denied} by user ${user} (left by another user?): ${fix(companion)}`;
  }
  if (need === 'write' || fileKind === 'missing') {
    const denied = deniedOn(dir, ['write']);
    if (denied !== null) {
      const name = basename(file);
      return `the directory ${dir} is ${denied} by user ${user}: SQLite creates ${name}, ${name}-wal and ${name}-shm there; ${fix(dir)}`;
    }
  }
  return null;
}

/** `/a/b/c` -> `/`, `/a`, `/a/b`, `/a/b/c`. */
function lineage(dir: string): string[] {
  const out: string[] = [];
  for (let d = dir; ; d = dirname(d)) {
    out.unshift(d);
    if (dirname(d) === d) return out;
  }
}

function kindOf(path: string): 'missing' | 'directory' | 'file' | 'other' {
  try {
    const s = statSync(path);
    return s.isDirectory() ? 'directory' : s.isFile() ? 'file' : 'other';
  } catch {
    return 'missing';
  }
}

type Permission = 'read' | 'write' | 'search';
const MODE: Readonly<Record<Permission, number>> = {
  read: constants.R_OK,
  write: constants.W_OK,
  search: constants.X_OK,
};
const MISSING: Readonly<Record<Permission, string>> = {
  read: 'not readable',
  write: 'not writable',
  search: 'not searchable',
};

/** Null when the process has every permission on `path`, else the first it lacks ("not writable", …). */
function deniedOn(path: string, permissions: readonly Permission[]): string | null {
  for (const p of permissions) {
    try {
      accessSync(path, MODE[p]);
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === 'EROFS' ? 'on a read-only file system' : MISSING[p];
    }
  }
  return null;
}

function chownName(): string {
  const user = processUser();
  const m = /^(\S+) \(uid \d+\)$/.exec(user);
  return m !== null ? m[1]! : user.replace(/^uid /, '');
}
