/**
 * A private PostgreSQL cluster for tests that stop and start the server itself (the machine's
 * shared one must not be touched): initdb into a temporary directory, its own port, trust
 * authentication on loopback, run by pg_ctl as nobody (postgres refuses to run as root). Needs
 * root, initdb and pg_ctl; `PRIVATE_POSTGRES_SKIP` says why a test cannot have one.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { closedPort } from './sms-gateway.js';

const NOBODY = { uid: 65534, gid: 65534 };

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

/** Why no private cluster can be made here, or false. */
export const PRIVATE_POSTGRES_SKIP: string | false =
  initdb === null || pgCtl === null
    ? 'initdb or pg_ctl is not installed: cannot make a private PostgreSQL cluster to stop and start'
    : !asRoot
      ? 'not running as root: cannot run a private PostgreSQL cluster as another user (postgres refuses to run as root)'
      : false;

export interface PrivatePostgres {
  /** `postgres://postgres@127.0.0.1:PORT/DATABASE`. */
  url(database: string): string;
  /** Stops the server (fast: open connections are ended), waiting until it is down. */
  stop(): void;
  /** Starts it again on the same port, waiting until it takes connections. */
  start(): void;
  /** Stops it for good and removes its files. */
  remove(): void;
}

/** Makes and starts a cluster with a database `database` in it. */
export async function startPrivatePostgres(database: string): Promise<PrivatePostgres> {
  if (PRIVATE_POSTGRES_SKIP !== false) throw new Error(PRIVATE_POSTGRES_SKIP);
  const dir = mkdtempSync(join(tmpdir(), 'sis-pg-restart-'));
  chmodSync(dir, 0o700);
  chownSync(dir, NOBODY.uid, NOBODY.gid);
  const data = join(dir, 'data');
  const asNobody = (file: string, args: string[]): void => {
    execFileSync(file, args, { ...NOBODY, stdio: 'ignore', cwd: dir, timeout: 60_000 });
  };
  asNobody(initdb!, ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
  const port = await closedPort();
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`;
  const start = (): void => asNobody(pgCtl!, ['-D', data, '-o', options, '-l', join(dir, 'log'), '-w', 'start']);
  start();
  const url = (db: string): string => `postgres://postgres@127.0.0.1:${port}/${db}`;
  const admin = new pg.Client({ connectionString: url('postgres') });
  await admin.connect();
  await admin.query(`create database ${database}`);
  await admin.end();
  let removed = false;
  return {
    url,
    start,
    stop: () => asNobody(pgCtl!, ['-D', data, '-m', 'fast', '-w', 'stop']),
    remove() {
      if (removed) return;
      removed = true;
      try {
        asNobody(pgCtl!, ['-D', data, '-m', 'immediate', 'stop']);
      } catch {
        // already stopped
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
