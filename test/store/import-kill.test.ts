/**
 * All or nothing across a real `kill -9`: a `sis import` process killed while it merges (it holds
 * the write transaction) leaves exactly the data stored before it, on both stores.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, describe, test } from 'node:test';
import type { Command } from '../../src/cli/command.js';
import { createExportCommand } from '../../src/cli/export-command.js';
import { createImportCommand } from '../../src/cli/import-command.js';
import type { CommandOutput } from '../../src/cli/output.js';
import { errorCode } from '../../src/store/db-errors.js';
import { adminClient, cleanupTargets, storeTargets } from '../helpers/store-targets.js';
import { repoRoot } from '../helpers/test-server.js';

const repo = repoRoot;
const dir = mkdtempSync(join(tmpdir(), 'sis-import-kill-'));
after(async () => {
  await cleanupTargets();
  rmSync(dir, { recursive: true, force: true });
});

/** Enough rows that the merge lasts a while (tenths of a second on SQLite, seconds on PostgreSQL). */
const ROWS = 200_000;
let generated: string | null = null;
function bigFile(): string {
  if (generated === null) {
    const out = join(dir, 'data');
    const made = spawnSync(process.execPath, [
      join(repo, 'scripts/generate-dataset.js'),
      '--students',
      String(ROWS),
      '--devices',
      String(ROWS),
      '--out',
      out,
    ]);
    assert.equal(made.status, 0, String(made.stderr));
    generated = join(out, 'dataset.json');
  }
  return generated;
}

async function inProcess(
  make: (output: CommandOutput) => Command,
  args: readonly string[],
  url: string,
): Promise<string> {
  let stdout = '';
  let stderr = '';
  const code = await make({
    stdout: { write: (t: string) => (stdout += t) },
    stderr: { write: (t: string) => (stderr += t) },
  }).run(args, { SIS_DATABASE_URL: url });
  assert.equal(code, 0, stderr);
  return stdout;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** True while another connection holds the database's write lock (the import's merge). */
function sqliteWriteLocked(path: string): boolean {
  const db = new DatabaseSync(path, { timeout: 0 });
  try {
    db.exec('begin immediate');
    db.exec('rollback');
    return false;
  } catch (error) {
    if (errorCode(error) === 'SQLITE_BUSY') return true;
    throw error;
  } finally {
    db.close();
  }
}

describe('a killed import leaves the old data', () => {
  for (const target of storeTargets) {
    test(target.name, { skip: target.skip ?? false, timeout: 120_000 }, async () => {
      const db = await target.fresh();
      await inProcess((o) => createImportCommand(o), [join(repo, 'examples/dataset.json')], db.url);
      const before = await inProcess(createExportCommand, [], db.url);

      // Its own application name, so that other sessions on the server are never mistaken for it.
      const name = `sis-kill-test-${process.pid}`;
      const child = spawn(process.execPath, [join(repo, 'dist/src/cli/main.js'), 'import', '--replace', bigFile()], {
        env: {
          ...process.env,
          SIS_DATABASE_URL: target.name === 'PostgreSQL' ? `${db.url}&application_name=${name}` : db.url,
        },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const exited = once(child, 'exit');
      let ended = false;
      void exited.then(() => (ended = true));

      // The merge runs in the write transaction: SQLite's write lock is held, or PostgreSQL runs
      // the insert into the real table. Killed then, the commit can never come.
      const client = target.name === 'PostgreSQL' ? await adminClient() : null;
      const merging = async (): Promise<boolean> => {
        if (client === null) {
          // Held at two looks 30 ms apart: not the moment opening the database takes to check its schema.
          const path = db.url.slice('sqlite:'.length);
          if (!sqliteWriteLocked(path)) return false;
          await sleep(30);
          return sqliteWriteLocked(path);
        }
        const rows = await client.query(
          `select 1 from pg_stat_activity where application_name = $1 and state = 'active' and query like 'insert into students%'`,
          [name],
        );
        return rows.rows.length > 0;
      };
      const deadline = Date.now() + 90_000;
      while (!ended && !(await merging())) {
        assert.ok(Date.now() < deadline, 'the import never reached its merge');
        await sleep(10);
      }
      assert.equal(ended, false, `the import ended before it could be killed in its merge: ${stderr}`);
      child.kill('SIGKILL');
      const [code, signal] = await exited;
      assert.equal(signal, 'SIGKILL', `exit code ${String(code)}`);

      if (client !== null) {
        // The server notices the lost client once its statement ends, then rolls the transaction back.
        while (
          (await client.query('select 1 from pg_stat_activity where application_name = $1', [name])).rows.length > 0
        ) {
          assert.ok(Date.now() < deadline, 'the killed import still has a session on the server');
          await sleep(50);
        }
      }
      assert.equal(await inProcess(createExportCommand, [], db.url), before, 'exactly the old data');
      const counts = await db.sql('select count(*) as n from students');
      assert.equal(Number(counts[0]!['n']), 5);
    });
  }
});
