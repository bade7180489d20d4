/**
 * A private PostgreSQL cluster for tests that stop and start the server itself (the machine's
 * shared one must not be touched): initdb into a temporary directory, its own port, trust
 * authentication on loopback, run by pg_ctl as nobody (postgres refuses to run as root). Needs
 * root, initdb and pg_ctl; `PRIVATE_POSTGRES_SKIP` says why a test cannot have one. And its
 * streaming standby (pg_basebackup -R), for a switchover: promote the standby, restart the old
 * primary as the new one's standby (standby.signal).
 */
import { execFileSync } from 'node:child_process';
import { appendFileSync, chmodSync, chownSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
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
// pg_basebackup of the same installation as pg_ctl (Debian puts only a wrapper on PATH).
const pgBasebackup =
  pgCtl === null
    ? null
    : join(
        execFileSync('sh', ['-c', `dirname "$(readlink -f ${pgCtl})"`], { encoding: 'utf8' }).trim(),
        'pg_basebackup',
      );
const asRoot = typeof process.getuid === 'function' && process.getuid() === 0;

/** Why no private cluster can be made here, or false. */
export const PRIVATE_POSTGRES_SKIP: string | false =
  initdb === null || pgCtl === null
    ? 'initdb or pg_ctl is not installed: cannot make a private PostgreSQL cluster to stop and start'
    : !asRoot
      ? 'not running as root: cannot run a private PostgreSQL cluster as another user (postgres refuses to run as root)'
      : false;

export interface PrivatePostgres {
  readonly port: number;
  /** `postgres://postgres@127.0.0.1:PORT/DATABASE`. */
  url(database: string): string;
  /** Stops the server (fast: open connections are ended), waiting until it is down. */
  stop(): void;
  /** Starts it again on the same port, waiting until it takes connections. */
  start(): void;
  /** Stops it for good and removes its files. */
  remove(): void;
  /** A standby: promoted to primary (pg_ctl promote), waiting until it is. */
  promote(): void;
  /** A stopped former primary: started again as a standby of `primary` (standby.signal, primary_conninfo). */
  followAsStandby(primary: PrivatePostgres): void;
}

function asNobodyIn(dir: string): (file: string, args: string[]) => void {
  return (file, args) => {
    execFileSync(file, args, { ...NOBODY, stdio: 'ignore', cwd: dir, timeout: 60_000 });
  };
}

/** A directory of nobody's, for a cluster's data, socket and log. */
function clusterDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'sis-pg-restart-'));
  chmodSync(dir, 0o700);
  chownSync(dir, NOBODY.uid, NOBODY.gid);
  return dir;
}

/** The server in `dir`/data on `port`, started. */
function cluster(dir: string, port: number): PrivatePostgres {
  const data = join(dir, 'data');
  const asNobody = asNobodyIn(dir);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`;
  const start = (): void => asNobody(pgCtl!, ['-D', data, '-o', options, '-l', join(dir, 'log'), '-w', 'start']);
  start();
  let removed = false;
  return {
    port,
    url: (db: string): string => `postgres://postgres@127.0.0.1:${port}/${db}`,
    start,
    stop: () => asNobody(pgCtl!, ['-D', data, '-m', 'fast', '-w', 'stop']),
    promote: () => asNobody(pgCtl!, ['-D', data, '-w', 'promote']),
    followAsStandby(primary) {
      const signal = join(data, 'standby.signal');
      writeFileSync(signal, '');
      chownSync(signal, NOBODY.uid, NOBODY.gid);
      appendFileSync(
        join(data, 'postgresql.auto.conf'),
        `primary_conninfo = 'host=127.0.0.1 port=${primary.port} user=postgres'\n`,
      );
      start();
    },
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

/** A streaming standby of `primary` (pg_basebackup -R: standby.signal and primary_conninfo written), started. */
export async function startPrivateStandby(primary: PrivatePostgres): Promise<PrivatePostgres> {
  if (PRIVATE_POSTGRES_SKIP !== false) throw new Error(PRIVATE_POSTGRES_SKIP);
  const dir = clusterDir();
  asNobodyIn(dir)(pgBasebackup!, [
    '-h',
    '127.0.0.1',
    '-p',
    String(primary.port),
    '-U',
    'postgres',
    '-D',
    join(dir, 'data'),
    '-R',
    '-X',
    'stream',
    '--checkpoint=fast',
  ]);
  return cluster(dir, await closedPort());
}

/** Makes and starts a cluster with a database `database` in it. */
export async function startPrivatePostgres(database: string): Promise<PrivatePostgres> {
  if (PRIVATE_POSTGRES_SKIP !== false) throw new Error(PRIVATE_POSTGRES_SKIP);
  const dir = clusterDir();
  asNobodyIn(dir)(initdb!, ['-D', join(dir, 'data'), '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
  const server = cluster(dir, await closedPort());
  const admin = new pg.Client({ connectionString: server.url('postgres') });
  await admin.connect();
  await admin.query(`create database ${database}`);
  await admin.end();
  return server;
}
