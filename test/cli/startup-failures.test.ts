/**
 * Every failure an operator meets at start, made for real and met by the real `sis serve`: one line
 * on stderr naming the thing and what to do, one log entry without a stack (the stack only at
 * LOG_LEVEL=debug), the documented exit status. Permission failures run the service as nobody.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
  writeSync,
  closeSync,
} from 'node:fs';
import { createServer } from 'node:net';
import type { AddressInfo, Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import BetterSqlite3 from 'better-sqlite3';
import { DEMO_DATASET } from '../../src/store/import/demo-data.js';
import { LATEST_SCHEMA_VERSION } from '../../src/store/schema/migration-list.js';
import { openStore } from '../../src/store/open/open-store.js';
import { HAVE_OPENSSL, makeCertificate } from '../helpers/certificates.js';
import { runToExit } from '../helpers/serve-process.js';
import type { ServeExit } from '../helpers/serve-process.js';
import { adminClient, cleanupTargets, newSchema, POSTGRES_SKIP } from '../helpers/store-targets.js';

const base = mkdtempSync(join(tmpdir(), 'sis-startup-'));
chmodSync(base, 0o755); // the service user must reach what the tests make for it
let counter = 0;
const newDir = (): string => {
  const dir = join(base, `case-${++counter}`);
  mkdirSync(dir, { mode: 0o755 });
  return dir;
};
after(async () => {
  rmSync(base, { recursive: true, force: true });
  await cleanupTargets();
});

const NOBODY = { uid: 65534, gid: 65534 };
const AS_ROOT = typeof process.getuid === 'function' && process.getuid() === 0;
const NOBODY_SKIP = AS_ROOT
  ? false
  : 'not running as root: cannot run the service as another user (nobody) to meet permission failures';

/** The one line, the exit status, the one log entry (no stack), and no stack anywhere. */
function assertOneLine(exit: ServeExit, status: number, errorCode: string, line: RegExp): void {
  assert.equal(exit.code, status, `exit status; stderr: ${exit.stderr}`);
  assert.equal(exit.errorLines.length, 1, `one line on stderr:\n${exit.stderr}`);
  assert.match(exit.errorLines[0]!, line);
  assert.ok(
    !exit.stderr.includes('    at ') && !exit.stdout.includes('    at '),
    `no stack trace:\n${exit.stdout}\n${exit.stderr}`,
  );
  const fatal = exit.logs.filter((l) => l['level'] === 60);
  assert.equal(fatal.length, 1, `one log entry: ${exit.stdout}`);
  assert.equal(fatal[0]!['msg'], exit.errorLines[0]!.replace(/^sis serve: /, ''));
  assert.equal(fatal[0]!['errorCode'], errorCode);
  assert.equal(fatal[0]!['exitStatus'], status);
  assert.equal(fatal[0]!['err'], undefined, 'no error details below LOG_LEVEL=debug');
}

/** A migrated SQLite database with the demo data, closed. */
async function realDatabase(path: string): Promise<void> {
  const store = await openStore(`sqlite:${path}`);
  await store.importDataset(DEMO_DATASET);
  await store.close();
}

function occupy(host: string): Promise<Server> {
  const server = createServer();
  return new Promise((resolve) => server.listen(0, host, () => resolve(server)));
}

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
    const raw = new BetterSqlite3(path);
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
    const raw = new BetterSqlite3(path);
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

describe('start-up failures: permissions of the service user (nobody)', { skip: NOBODY_SKIP }, () => {
  it('a directory the user cannot enter: the directory and the permission (77)', async () => {
    const dir = newDir();
    await realDatabase(join(dir, 'sis.db'));
    chmodSync(dir, 0o700); // root's alone
    const exit = await runToExit(`sqlite:${join(dir, 'sis.db')}`, {}, { user: NOBODY });
    assertOneLine(
      exit,
      77,
      'ERR_DB_ACCESS',
      new RegExp(
        `^sis serve: cannot start: the directory ${dir} cannot be entered by user nobody \\(uid 65534\\) \\(no search permission\\)`,
      ),
    );
  });

  it('a directory the user cannot write: SQLite must create its files there (77)', async () => {
    const dir = newDir(); // root's, 755
    const exit = await runToExit(`sqlite:${join(dir, 'sis.db')}`, {}, { user: NOBODY });
    assertOneLine(
      exit,
      77,
      'ERR_DB_ACCESS',
      new RegExp(
        `^sis serve: cannot start: the directory ${dir} is not writable by user nobody \\(uid 65534\\): SQLite creates sis\\.db, sis\\.db-wal and sis\\.db-shm there; give it to the user \\(chown nobody ${dir}\\)`,
      ),
    );
  });

  it('a database file the user can read but not write: said at start, not at the first write (77)', async () => {
    const dir = newDir();
    chownSync(dir, NOBODY.uid, NOBODY.gid);
    const path = join(dir, 'sis.db');
    await realDatabase(path); // root's file, 644
    const exit = await runToExit(`sqlite:${path}`, {}, { user: NOBODY });
    assertOneLine(
      exit,
      77,
      'ERR_DB_ACCESS',
      new RegExp(
        `^sis serve: cannot start: the database file ${path} is not writable by user nobody \\(uid 65534\\): give it to the user`,
      ),
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

describe('start-up failures: the address', () => {
  it('a port in use: the address and the port (69)', async () => {
    const taken = await occupy('127.0.0.1');
    const port = (taken.address() as AddressInfo).port;
    try {
      const exit = await runToExit(`sqlite:${join(newDir(), 'sis.db')}`, { PORT: String(port) });
      assertOneLine(
        exit,
        69,
        'ERR_ADDRESS',
        new RegExp(
          `^sis serve: cannot start: the address 127\\.0\\.0\\.1:${port} is already in use \\(another process listens on port ${port}\\): stop that process, or set PORT`,
        ),
      );
    } finally {
      taken.close();
    }
  });

  it('with workers, the failure of every worker is one line from the primary (69)', async () => {
    const taken = await occupy('127.0.0.1');
    const port = (taken.address() as AddressInfo).port;
    try {
      const exit = await runToExit(
        `sqlite:${join(newDir(), 'sis.db')}`,
        { PORT: String(port) },
        { args: ['serve', '--workers', '2'] },
      );
      assertOneLine(
        exit,
        69,
        'ERR_ADDRESS',
        new RegExp(`^sis serve: cannot start: the address 127\\.0\\.0\\.1:${port} is already in use`),
      );
    } finally {
      taken.close();
    }
  });

  it("an address that is not this machine's (69)", async () => {
    const exit = await runToExit(`sqlite:${join(newDir(), 'sis.db')}`, { HOST: '192.0.2.1', PORT: '8080' });
    assertOneLine(
      exit,
      69,
      'ERR_ADDRESS',
      /^sis serve: cannot start: HOST=192\.0\.2\.1 is not an address of this machine, so 192\.0\.2\.1:8080 cannot be listened on: set HOST/,
    );
  });

  const unprivilegedFrom = (): number => {
    try {
      return Number(readFileSync('/proc/sys/net/ipv4/ip_unprivileged_port_start', 'utf8'));
    } catch {
      return 1024;
    }
  };
  const portSkip = !AS_ROOT
    ? NOBODY_SKIP
    : unprivilegedFrom() <= 80
      ? 'this machine lets any user listen on port 80'
      : false;
  it('a privileged port for an unprivileged user (69)', { skip: portSkip }, async () => {
    const dir = newDir();
    chownSync(dir, NOBODY.uid, NOBODY.gid);
    const exit = await runToExit(`sqlite:${join(dir, 'sis.db')}`, { PORT: '80' }, { user: NOBODY });
    assertOneLine(
      exit,
      69,
      'ERR_ADDRESS',
      /^sis serve: cannot start: user nobody \(uid 65534\) may not listen on 127\.0\.0\.1:80 \(ports below 1024 need root or the CAP_NET_BIND_SERVICE capability\)/,
    );
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

describe(
  'start-up failures: TLS files',
  { skip: HAVE_OPENSSL ? false : 'openssl is not installed: cannot make test certificates' },
  () => {
    it("a key that is not the certificate's: both named (78)", async () => {
      const dir = newDir();
      const a = makeCertificate(dir, 'a');
      const b = makeCertificate(dir, 'b');
      const exit = await runToExit(`sqlite:${join(dir, 'sis.db')}`, { SIS_TLS_CERT: a.cert, SIS_TLS_KEY: b.key });
      assertOneLine(
        exit,
        78,
        'ERR_CONFIG',
        new RegExp(
          `^sis serve: invalid configuration: SIS_TLS_KEY="${b.key}" does not match the certificate in SIS_TLS_CERT="${a.cert}": give the key the certificate was issued for$`,
        ),
      );
    });

    it('a key the service user cannot read (78)', { skip: NOBODY_SKIP }, async () => {
      const dir = newDir();
      chownSync(dir, NOBODY.uid, NOBODY.gid);
      const a = makeCertificate(dir, 'a');
      chmodSync(a.key, 0o600); // root's
      chmodSync(a.cert, 0o644);
      const exit = await runToExit(
        `sqlite:${join(dir, 'sis.db')}`,
        { SIS_TLS_CERT: a.cert, SIS_TLS_KEY: a.key },
        { user: NOBODY },
      );
      assertOneLine(
        exit,
        78,
        'ERR_CONFIG',
        new RegExp(
          `^sis serve: invalid configuration: SIS_TLS_KEY="${a.key}": not readable by user nobody \\(uid 65534\\): give the user read permission on it$`,
        ),
      );
    });
  },
);

function sha256(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}
