/**
 * Start-up failures (see startup-failures.test.ts) from the permissions of the service user: the
 * service runs as nobody, and meets a directory it cannot enter or write and a database file it
 * cannot write; `sis check` says the same. Only as root (it must run the service as another user).
 */
import assert from 'node:assert/strict';
import { chmodSync, chownSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { runToExit } from '../helpers/serve-process.js';
import { assertOneLine, newDir, NOBODY, NOBODY_SKIP, realDatabase } from '../helpers/startup-failure.js';

/** `sis serve` as nobody on the SQLite file `path`: refused at start with exit 77 and `line`. */
async function refusedAsNobody(path: string, line: string): Promise<void> {
  const exit = await runToExit(`sqlite:${path}`, {}, { user: NOBODY });
  assertOneLine(exit, 77, 'ERR_DB_ACCESS', new RegExp(`^sis serve: cannot start: ${line}`));
}

describe('start-up failures: permissions of the service user (nobody)', { skip: NOBODY_SKIP }, () => {
  it('a directory the user cannot enter: the directory and the permission (77)', async () => {
    const dir = newDir();
    await realDatabase(join(dir, 'sis.db'));
    chmodSync(dir, 0o700); // root's alone
    await refusedAsNobody(
      join(dir, 'sis.db'),
      `the directory ${dir} cannot be entered by user nobody \\(uid 65534\\) \\(no search permission\\)`,
    );
  });

  it('a directory the user cannot write: SQLite must create its files there (77)', async () => {
    const dir = newDir(); // root's, 755
    await refusedAsNobody(
      join(dir, 'sis.db'),
      `the directory ${dir} is not writable by user nobody \\(uid 65534\\): SQLite creates sis\\.db, sis\\.db-wal and sis\\.db-shm there; give it to the user \\(chown nobody ${dir}\\)`,
    );
  });

  it('a database file the user can read but not write: said at start, not at the first write (77)', async () => {
    const dir = newDir();
    chownSync(dir, NOBODY.uid, NOBODY.gid);
    const path = join(dir, 'sis.db');
    await realDatabase(path); // root's file, made 0600
    chmodSync(path, 0o644); // readable by others, writable by root alone
    await refusedAsNobody(
      path,
      `the database file ${path} is not writable by user nobody \\(uid 65534\\): give it to the user`,
    );
  });

  it('sis check says the same, and fails (1)', async () => {
    const dir = newDir();
    await realDatabase(join(dir, 'sis.db'));
    chmodSync(dir, 0o700);
    const exit = await runToExit(`sqlite:${join(dir, 'sis.db')}`, {}, { user: NOBODY, args: ['check'] });
    assert.equal(exit.code, 1);
    assert.match(
      exit.stdout,
      new RegExp(`^database: FAILED: the directory ${dir} cannot be entered by user nobody`, 'm'),
    );
  });
});
