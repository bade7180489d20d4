/**
 * PostgreSQL refusing the service, for real: a private cluster (initdb into a temporary directory,
 * password authentication, its own port, started by pg_ctl as nobody since postgres will not run
 * as root) with a role that has a password. A wrong password and a missing database each stop the
 * start at once, with one line that says which, never the password; `sis check` says the same.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chownSync, mkdtempSync, rmSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { runToExit } from '../helpers/serve-process.js';
import { closedPort } from '../helpers/sms-gateway.js';

const NOBODY = { uid: 65534, gid: 65534 };
const SUPERUSER_PASSWORD = 'super-secret-for-the-test-cluster';
const SIS_PASSWORD = 'the-right-horse-battery-staple';
const WRONG_PASSWORD = 'a-wrong-password-that-must-never-be-printed';

function tool(name: string): string | null {
  try {
    return execFileSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).trim() || null;
  } catch {
    return null;
  }
}

const initdb = tool('initdb');
const pgCtl = tool('pg_ctl');
const asRoot = typeof process.getuid === 'function' && process.getuid() === 0;
const SKIP =
  initdb === null || pgCtl === null
    ? 'initdb or pg_ctl is not installed: cannot make a private PostgreSQL cluster with password authentication'
    : !asRoot
      ? 'not running as root: cannot start the private PostgreSQL cluster as another user (postgres refuses to run as root)'
      : false;

describe('start-up failures: PostgreSQL refuses the login or has no such database', { skip: SKIP }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'sis-pg-private-'));
  const data = join(dir, 'data');
  let port = 0;
  const url = (user: string, password: string, database: string): string =>
    `postgres://${user}:${password}@127.0.0.1:${port}/${database}`;
  const asNobody = (file: string, args: string[]): void => {
    execFileSync(file, args, { ...NOBODY, stdio: 'ignore', cwd: dir, timeout: 60_000 });
  };

  before(async () => {
    chmodSync(dir, 0o700);
    chownSync(dir, NOBODY.uid, NOBODY.gid);
    const pwfile = join(dir, 'pw');
    writeFileSync(pwfile, `${SUPERUSER_PASSWORD}\n`);
    chownSync(pwfile, NOBODY.uid, NOBODY.gid);
    asNobody(initdb!, [
      '-D',
      data,
      '-U',
      'postgres',
      '--auth=scram-sha-256',
      `--pwfile=${pwfile}`,
      '-E',
      'UTF8',
      '--no-sync',
    ]);
    port = await closedPort();
    const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`;
    asNobody(pgCtl!, ['-D', data, '-o', options, '-l', join(dir, 'log'), '-w', 'start']);
    const admin = new pg.Client({ connectionString: url('postgres', SUPERUSER_PASSWORD, 'postgres') });
    await admin.connect();
    await admin.query(`create role sis login password '${SIS_PASSWORD}'`);
    await admin.query('create database sis owner sis');
    await admin.end();
  });

  after(() => {
    try {
      asNobody(pgCtl!, ['-D', data, '-m', 'immediate', 'stop']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  /** One line, the status, no stack, no retry, and neither password anywhere. */
  const assertRefused = (exit: Awaited<ReturnType<typeof runToExit>>, status: number, line: RegExp): void => {
    assert.equal(exit.code, status, exit.stderr);
    assert.equal(exit.errorLines.length, 1, exit.stderr);
    assert.match(exit.errorLines[0]!, line);
    const all = exit.stdout + exit.stderr;
    assert.ok(!all.includes('    at '), 'no stack trace');
    for (const secret of [WRONG_PASSWORD, SIS_PASSWORD, SUPERUSER_PASSWORD])
      assert.ok(!all.includes(secret), 'no password is ever printed');
    assert.equal(exit.logs.filter((l) => l['level'] === 60).length, 1);
    assert.ok(!exit.logs.some((l) => l['dependency'] === 'database'), 'not retried (no "unavailable, retrying" state)');
  };

  it('with the right password sis check passes (the cluster works)', async () => {
    const exit = await runToExit(url('sis', SIS_PASSWORD, 'sis'), {}, { args: ['check'] });
    assert.equal(exit.code, 0, exit.stdout + exit.stderr);
    assert.match(exit.stdout, new RegExp(`^database: ok \\(127\\.0\\.0\\.1:${port}/sis: no tables yet`, 'm'));
  });

  it('a wrong password: said so, not retried, the password never printed (77)', async () => {
    const exit = await runToExit(url('sis', WRONG_PASSWORD, 'sis'));
    assertRefused(
      exit,
      77,
      new RegExp(
        `^sis serve: cannot start: PostgreSQL at 127\\.0\\.0\\.1:${port} refused the login of user "sis" \\(password authentication failed for user "sis"\\): ` +
          `correct the user or password in SIS_DATABASE_URL .*; a refused login is not retried$`,
      ),
    );
  });

  it('a database that does not exist: its name, and how to make it (78)', async () => {
    const exit = await runToExit(url('sis', SIS_PASSWORD, 'sis_nope'));
    assertRefused(
      exit,
      78,
      new RegExp(
        `^sis serve: cannot start: PostgreSQL at 127\\.0\\.0\\.1:${port} has no database "sis_nope": create it \\(createdb -O sis sis_nope\\) or correct the database name in SIS_DATABASE_URL$`,
      ),
    );
  });

  it('sis check says which, and fails (1)', async () => {
    const exit = await runToExit(url('sis', WRONG_PASSWORD, 'sis'), {}, { args: ['check'] });
    assert.equal(exit.code, 1);
    assert.match(
      exit.stdout,
      /^database: FAILED: PostgreSQL at \S+ refused the login of user "sis" \(password authentication failed/m,
    );
    assert.ok(!exit.stdout.includes(WRONG_PASSWORD) && !exit.stderr.includes(WRONG_PASSWORD));
  });
});
