/**
 * The soak's PostgreSQL: a private primary and a streaming standby (initdb, pg_basebackup -R),
 * each on its own port, run as nobody (postgres refuses root) in one temporary directory, so a
 * switchover can be done for real without touching the machine's shared server. `switchover()`
 * stops the primary (fast: its WAL is then all on the standby), promotes the standby, and brings
 * the old primary back as the new one's standby (standby.signal, primary_conninfo): the two swap
 * roles and the next switchover goes back. Needs root, initdb, pg_ctl and pg_basebackup (as
 * test/helpers/private-postgres.ts does for the tests).
 */
import { execFile, execFileSync } from 'node:child_process';
import { appendFileSync, chmodSync, chownSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort } from '../load/processes.js';

const NOBODY = { uid: 65534, gid: 65534 };
const run = promisify(execFile);

function tool(name: string): string | null {
  try {
    return execFileSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).trim() || null;
  } catch {
    return null;
  }
}

/** Why no pair can be made here, or null. */
export function postgresPairMissing(): string | null {
  const missing = ['initdb', 'pg_ctl', 'pg_basebackup'].filter((t) => tool(t) === null);
  if (missing.length > 0) return `${missing.join(', ')} not on PATH (Debian's postgresql package)`;
  if (process.getuid?.() !== 0) return 'not root: the private clusters run as nobody';
  return null;
}

interface Node {
  readonly name: string;
  readonly data: string;
  readonly port: number;
}

export class PostgresPair {
  #primary: Node;
  #standby: Node;
  #removed = false;

  private constructor(
    private readonly dir: string,
    a: Node,
    b: Node,
  ) {
    this.#primary = a;
    this.#standby = b;
  }

  /** Makes both clusters, the database `database` on the primary, the standby streaming from it. */
  static async start(database: string): Promise<PostgresPair> {
    const dir = mkdtempSync(join(tmpdir(), 'sis-soak-pg-'));
    chmodSync(dir, 0o700);
    chownSync(dir, NOBODY.uid, NOBODY.gid);
    const pair = new PostgresPair(
      dir,
      { name: 'pg-a', data: join(dir, 'pg-a'), port: await freePort() },
      { name: 'pg-b', data: join(dir, 'pg-b'), port: await freePort() },
    );
    try {
      const a = pair.#primary;
      await pair.#run('initdb', ['-D', a.data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
      await pair.#start(a);
      const admin = new pg.Client({ connectionString: pair.#url(a, 'postgres') });
      await admin.connect();
      await admin.query(`create database ${database}`);
      await admin.end();
      const b = pair.#standby;
      await pair.#run('pg_basebackup', [
        '-h',
        '127.0.0.1',
        '-p',
        String(a.port),
        '-U',
        'postgres',
        '-D',
        b.data,
        '-R',
        '--checkpoint=fast',
      ]);
      await pair.#start(b);
    } catch (error) {
      pair.remove();
      throw error;
    }
    return pair;
  }

  get primaryPort(): number {
    return this.#primary.port;
  }

  url(database: string): string {
    return this.#url(this.#primary, database);
  }

  /** Stops the primary. Then `promote()`, then `rejoin()`: three steps, so the caller can time them. */
  async stopPrimary(): Promise<void> {
    await this.#run('pg_ctl', ['-D', this.#primary.data, '-m', 'fast', '-w', '-t', '60', 'stop']);
  }

  /** The standby becomes the primary; returns its port. */
  async promote(): Promise<number> {
    await this.#run('pg_ctl', ['-D', this.#standby.data, '-w', '-t', '60', 'promote']);
    [this.#primary, this.#standby] = [this.#standby, this.#primary];
    return this.#primary.port;
  }

  /** The old primary starts again as the new primary's standby. */
  async rejoin(): Promise<void> {
    const old = this.#standby;
    writeFileSync(join(old.data, 'standby.signal'), '');
    appendFileSync(
      join(old.data, 'postgresql.auto.conf'),
      `primary_conninfo = 'host=127.0.0.1 port=${this.#primary.port} user=postgres'\n`,
    );
    await this.#start(old);
  }

  /** Whether the standby streams from the primary now (pg_stat_replication on the primary). */
  async streaming(): Promise<boolean> {
    const client = new pg.Client({ connectionString: this.#url(this.#primary, 'postgres') });
    try {
      await client.connect();
      const { rows } = await client.query<{ n: string }>(
        "select count(*) as n from pg_stat_replication where state = 'streaming'",
      );
      return Number(rows[0]?.n) > 0;
    } catch {
      return false;
    } finally {
      await client.end().catch(() => undefined);
    }
  }

  /** Stops both (immediately) and removes their files; safe to call twice. */
  remove(): void {
    if (this.#removed) return;
    this.#removed = true;
    for (const node of [this.#primary, this.#standby])
      try {
        // Synchronous: this also runs from an exit handler.
        execFileSync(tool('pg_ctl')!, ['-D', node.data, '-m', 'immediate', '-w', 'stop'], {
          ...NOBODY,
          stdio: 'ignore',
          cwd: this.dir,
          timeout: 30_000,
        });
      } catch {
        // not running
      }
    rmSync(this.dir, { recursive: true, force: true });
  }

  #url(node: Node, database: string): string {
    return `postgres://postgres@127.0.0.1:${node.port}/${database}`;
  }

  #start(node: Node): Promise<void> {
    const options = `-p ${node.port} -k ${this.dir} -c listen_addresses=127.0.0.1 -c fsync=off`;
    return this.#run('pg_ctl', [
      '-D',
      node.data,
      '-o',
      options,
      '-l',
      join(this.dir, `${node.name}.log`),
      '-w',
      'start',
    ]);
  }

  async #run(name: string, args: string[]): Promise<void> {
    await run(tool(name)!, args, { ...NOBODY, cwd: this.dir, timeout: 90_000 }).catch(
      (error: { stderr?: string; code?: unknown; signal?: unknown }) => {
        const why = `${String(error.code ?? '')} ${String(error.signal ?? '')} ${error.stderr ?? ''}`.trim();
        throw new Error(`${name} ${args.join(' ')} failed: ${why}`);
      },
    );
  }
}
