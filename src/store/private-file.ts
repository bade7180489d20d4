/**
 * Files that hold personal data (the SQLite database, exports, shadow reports) are created readable
 * by their owner alone: mode 0600, set with fchmod after creation so a permissive umask (0002,
 * 0000) cannot widen it. SQLite gives its -wal and -shm files the database file's mode.
 */
import { closeSync, constants, fchmodSync, openSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { open, rename, rm } from 'node:fs/promises';

/** Owner read and write, nobody else anything. */
export const PRIVATE_MODE = 0o600;

/**
 * Creates `path` empty with mode 0600 if it does not exist yet; an existing file is left as it is
 * (its mode is the operator's choice). True when it was created.
 */
export function createPrivateFile(path: string): boolean {
  let fd: number;
  try {
    fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, PRIVATE_MODE);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
  try {
    fchmodSync(fd, PRIVATE_MODE);
  } finally {
    closeSync(fd);
  }
  return true;
}

/** Opens a new file (never an existing one: `wx`) with mode 0600, whatever the umask. */
export async function openPrivateFile(path: string): Promise<FileHandle> {
  const handle = await open(path, 'wx', PRIVATE_MODE);
  try {
    await handle.chmod(PRIVATE_MODE);
  } catch (error) {
    await handle.close();
    throw error;
  }
  return handle;
}

/**
 * Writes `text` to `path` through a new 0600 file beside it, renamed over `path` once whole: the
 * file ends 0600 even where an older one with a wider mode stood, and is never seen half written.
 */
export async function writePrivateFile(path: string, text: string): Promise<void> {
  const temporary = `${path}.partial-${process.pid}`;
  const handle = await openPrivateFile(temporary);
  try {
    await handle.writeFile(text);
    await handle.close();
    await rename(temporary, path);
  } catch (error) {
    await handle.close().catch(() => undefined);
    await rm(temporary, { force: true });
    throw error;
  }
}
