/**
 * Every failure an operator meets at start, made for real and met by the real `sis serve`: one line
 * on stderr naming the thing and what to do, one log entry without a stack (the stack only at
 * LOG_LEVEL=debug), the documented exit status. Here the database: a SQLite file that is not one,
 * is damaged or was migrated by a newer version, anything unforeseen, and PostgreSQL migrated by a
 * newer version. Permissions, the address and TLS files: startup-failures-*.test.ts.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { openSync, readdirSync, readFileSync, writeFileSync, writeSync, closeSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { describe, it } from 'node:test';
import { openStore } from '../../src/store/open/open-store.js';
import { LATEST_SCHEMA_VERSION } from '../../src/store/schema/migration-list.js';
import { runToExit } from '../helpers/serve-process.js';
import { assertOneLine, newDir, realDatabase } from '../helpers/startup-failure.js';
import { adminClient, newSchema, POSTGRES_SKIP } from '../helpers/store-targets.js';

describe('start-up failures: the database file', () => {
  it('a file that is not a database: its path, and how to restore or start afresh (65)', async () => {
    const path = join(newDir(), 'sis.db');
    writeFileSync(path, 'these bytes were never a SQLite database, whatever the name says\n'.repeat(20));
    const exit = await runToExit(`sqlite:${path}`);
    assertOneLine(
      exit,
      65,
      'ERR_DB_UNUSABLE',
      new RegExp(
        `^sis serve: cannot start: the database file ${path} is not a usable SQLite database \\(file is not a database\\): restore it from a backup, or move it aside to start afresh`,
      ),
    );
  });

  it('a damaged database ("malformed") is named the same way (65)', async () => {
    const path = join(newDir(), 'sis.db');
    await realDatabase(path);
    const fd = openSync(path, 'r+');
    writeSync(fd, Buffer.alloc(200, 0xab), 0, 200, 100); // page 1 after the header: the schema's b-tree
    closeSync(fd);
    const exit = await runToExit(`sqlite:${path}`);
    assertOneLine(
      exit,
      65,
      'ERR_DB_UNUSABLE',
      /^sis serve: cannot start: the database file \S+sis\.db is not a usable SQLite database \(database disk image is malformed\)/,
    );
  });

  it('a database migrated by a newer version: both versions named, nothing changed (65)', async () => {
    const dir = newDir();
    const path = join(dir, 'sis.db');
    await realDatabase(path);
    const future = LATEST_SCHEMA_VERSION + 1;
    const raw = new DatabaseSync(path);
    raw
      .prepare('insert into sis_migrations (version, name, applied_at) values (?, ?, ?)')
      .run(future, 'a migration from the future', '2031-01-02T03:04:05.000Z');
    raw.close();
    const before = { bytes: sha256(path), files: readdirSync(dir).sort() };
    const exit = await runToExit(`sqlite:${path}`);
    assertOneLine(
      exit,
      65,
      'ERR_DB_SCHEMA_NEWER',
      new RegExp(
        `^sis serve: cannot start: the database has schema version ${future}, newer than this program knows \\(${LATEST_SCHEMA_VERSION}\\): ` +
          `it was migrated by a newer version of the service \\(its migration "a migration from the future" was applied 2031-01-02T03:04:05.000Z\\); .*nothing was changed$`,
      ),
    );
    assert.deepEqual(
      { bytes: sha256(path), files: readdirSync(dir).sort() },
      before,
      'the file is left exactly as it was',
    );
  });

  it('anything unforeseen: its message and "run with LOG_LEVEL=debug for details" (1); the stack only at debug', async () => {
    const path = join(newDir(), 'sis.db');
    const raw = new DatabaseSync(path);
    raw.exec('create table sis_migrations (x integer)'); // a table of that name, but not ours
    raw.close();
    const exit = await runToExit(`sqlite:${path}`);
    assertOneLine(
      exit,
      1,
      'ERR_STARTUP',
      /^sis serve: cannot start: no such column: "version".* \(run with LOG_LEVEL=debug for details\)$/,
    );

    const debug = await runToExit(`sqlite:${path}`, { LOG_LEVEL: 'debug' });
    assert.equal(debug.code, 1);
    assert.deepEqual(debug.errorLines, exit.errorLines, 'stderr is the same one line');
    const entry = debug.logs.find((l) => l['level'] === 60)!;
    const err = entry['err'] as { stack?: string; message?: string };
    assert.match(err.message ?? '', /^no such column: "version"/);
    assert.match(err.stack ?? '', /\n {4}at /, 'at debug the log entry has the stack');
  });
});

describe('start-up failures: PostgreSQL migrated by a newer version', { skip: POSTGRES_SKIP ?? false }, () => {
  it('both versions named, the schema left as it was (65)', async () => {
    const { schema, url } = newSchema('newer');
    await (await openStore(url)).close();
    const admin = await adminClient();
    const future = LATEST_SCHEMA_VERSION + 1;
    await admin.query(
      `insert into "${schema}".sis_migrations (version, name, applied_at) values ($1, 'from the future', 'x')`,
      [future],
    );
    const snapshot = async (): Promise<unknown> => ({
      migrations: (
        await admin.query(`select version, name, applied_at from "${schema}".sis_migrations order by version`)
      ).rows,
      tables: (
        await admin.query(
          `select table_name from information_schema.tables where table_schema = $1 order by table_name`,
          [schema],
        )
      ).rows,
    });
    const before = await snapshot();
    const exit = await runToExit(url);
    assertOneLine(
      exit,
      65,
      'ERR_DB_SCHEMA_NEWER',
      new RegExp(
        `^sis serve: cannot start: the database has schema version ${future}, newer than this program knows \\(${LATEST_SCHEMA_VERSION}\\)`,
      ),
    );
    assert.deepEqual(await snapshot(), before);
  });
});

function sha256(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}
