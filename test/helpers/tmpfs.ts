/**
 * A small tmpfs (2 MiB) for tests that fill a disk for real: SQLite's disk-full failures. Needs
 * root (mount); `skip` says why there is none. Unmounted by `unmount` or after the file's tests.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';

export interface Tmpfs {
  readonly dir: string;
  readonly skip: string | false;
  unmount(): void;
}

export function mountTmpfs(): Tmpfs {
  const dir = mkdtempSync(join(tmpdir(), 'sis-full-'));
  let mounted = false;
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', dir], { stdio: 'ignore' });
    mounted = true;
  } catch {
    // reported as the skip reason
  }
  const unmount = (): void => {
    if (mounted) execFileSync('umount', [dir], { stdio: 'ignore' });
    mounted = false;
    rmSync(dir, { recursive: true, force: true });
  };
  after(unmount);
  return {
    dir,
    skip: mounted ? false : 'cannot mount a small tmpfs here (needs root): the disk-full test is skipped',
    unmount,
  };
}

/** Fills the file system holding `file` (a file larger than it, cut short by ENOSPC). */
export function fillDisk(file: string): void {
  try {
    writeFileSync(file, Buffer.alloc(8 * 1024 * 1024));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
  }
}
