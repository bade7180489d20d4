/**
 * Opening a store: the database URL and the dialect it chooses, SQLite's file and WAL, the
 * PostgreSQL schema (named in the URL, created on first use, and given to every connection as a
 * startup parameter, so an odd name reaches the pool and the COPY session of a bulk import alike
 * and nothing runs between a connection's opening and its first query: a `set search_path` there
 * once leaked the pool client when the connection was cut just then), the demo dataset.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, describe, test } from 'node:test';
import { jsonDatasetSource } from '../../src/dataset/json-stream.js';
import { DEMO_DATASET } from '../../src/store/import/demo-data.js';
import { DatabaseUrlError, parseDatabaseUrl, redactDatabaseUrl } from '../../src/store/open/database-url.js';
import { dialectFor } from '../../src/store/open/open-store.js';
import { openStore } from '../../src/store/open/open-store.js';
import type { Dataset } from '../../src/store/store.js';
import {
  adminClient,
  cleanupTargets,
  newSchema,
  POSTGRES_SKIP,
  postgresUrl,
  storeTargets,
} from '../helpers/store-targets.js';
import { repoRoot } from '../helpers/test-server.js';

const tempDir = mkdtempSync(join(tmpdir(), 'sis-opening-'));
after(async () => {
  await cleanupTargets();
  rmSync(tempDir, { recursive: true, force: true });
});

async function* text(...parts: string[]): AsyncGenerator<string> {
  yield* parts;
}

describe('opening', () => {
  test('SQLite: creates the parent directory and uses WAL', async () => {
    const path = join(tempDir, 'deep', 'er', 'sis.db');
    const store = await openStore(`sqlite:${path}`);
    await store.close();
    const db = new DatabaseSync(path);
    assert.deepEqual({ ...db.prepare('pragma journal_mode').get() }, { journal_mode: 'wal' });
    db.close();
    const bare = await openStore(join(tempDir, 'bare.db'));
    await bare.close();
  });

  test('SQLite in memory', async () => {
    const store = await openStore('sqlite::memory:');
    await store.importDataset(DEMO_DATASET);
    assert.equal(await store.deviceToken('2'), 'tok-BBB-222');
    await store.close();
  });

  test('PostgreSQL: ?schema= in the URL selects and creates the schema', async (t) => {
    if (POSTGRES_SKIP !== null) return t.skip(POSTGRES_SKIP);
    const { schema, url } = newSchema('url');
    const store = await openStore(url, { statementTimeoutMs: 10_000 });
    await store.importDataset({ devices: [{ id: 'here', token: 'yes' }] });
    await store.close();
    const rows = await (await adminClient()).query(`select token from "${schema}".devices`);
    assert.deepEqual(rows.rows, [{ token: 'yes' }]);
  });

  test('database URLs', () => {
    assert.deepEqual(parseDatabaseUrl('sqlite:./data/sis.db'), { dialect: 'sqlite', path: './data/sis.db' });
    assert.deepEqual(parseDatabaseUrl('sqlite:///var/lib/sis.db'), { dialect: 'sqlite', path: '/var/lib/sis.db' });
    assert.deepEqual(parseDatabaseUrl('sqlite::memory:'), { dialect: 'sqlite', path: ':memory:' });
    assert.deepEqual(parseDatabaseUrl('data/x.db'), { dialect: 'sqlite', path: 'data/x.db' });
    assert.deepEqual(parseDatabaseUrl('postgresql://u:p@h/db?sslmode=require&schema=a%20b'), {
      dialect: 'postgres',
      connectionString: 'postgresql://u:p@h/db?sslmode=require',
      schema: 'a b',
      hosts: [{ where: 'h:5432', connectionString: 'postgresql://u:p@h/db?sslmode=require' }],
      sessionAttrs: null,
      loadBalance: false,
    });
    assert.deepEqual(parseDatabaseUrl('postgres://h/db'), {
      dialect: 'postgres',
      connectionString: 'postgres://h/db',
      schema: null,
      hosts: [{ where: 'h:5432', connectionString: 'postgres://h/db' }],
      sessionAttrs: null,
      loadBalance: false,
    });
    // libpq's host list (issue 44): each host a URL of its own; its parameters taken out.
    assert.deepEqual(
      parseDatabaseUrl(
        'postgres://u:p%40ss@a.example:5433,[::1]:5434,b/db?target_session_attrs=read-write&load_balance_hosts=random&sslmode=require',
      ),
      {
        dialect: 'postgres',
        connectionString: 'postgres://u:p%40ss@a.example:5433/db?sslmode=require',
        schema: null,
        hosts: [
          { where: 'a.example:5433', connectionString: 'postgres://u:p%40ss@a.example:5433/db?sslmode=require' },
          { where: '[::1]:5434', connectionString: 'postgres://u:p%40ss@[::1]:5434/db?sslmode=require' },
          { where: 'b:5432', connectionString: 'postgres://u:p%40ss@b/db?sslmode=require' },
        ],
        sessionAttrs: 'read-write',
        loadBalance: true,
      },
    );
    for (const attrs of ['any', 'read-write', 'read-only', 'primary', 'standby', 'prefer-standby'])
      assert.equal(
        (parseDatabaseUrl(`postgres://a,b/db?target_session_attrs=${attrs}`) as { sessionAttrs: string }).sessionAttrs,
        attrs,
      );
    assert.throws(
      () => parseDatabaseUrl('postgres://a,b/db?target_session_attrs=master'),
      /target_session_attrs=master/,
    );
    assert.throws(() => parseDatabaseUrl('postgres://a,b/db?load_balance_hosts=yes'), /load_balance_hosts=yes/);
    assert.throws(() => parseDatabaseUrl('postgres://a,,b/db'), /empty host/);
    assert.equal(
      redactDatabaseUrl('postgres://u:secret@a:5432,b:5432/db?target_session_attrs=read-write'),
      'postgres://u:***@a:5432,b:5432/db?target_session_attrs=read-write',
    );
    assert.throws(() => parseDatabaseUrl('mysql://h/db'), /unsupported database URL scheme "mysql:"/);
    assert.throws(() => parseDatabaseUrl('sqlite:'), /no database file/);
    assert.equal(redactDatabaseUrl('postgres://u:secret@h:5432/db'), 'postgres://u:***@h:5432/db');
    assert.equal(redactDatabaseUrl('postgres://h/db?password=secret&x=1'), 'postgres://h/db?password=***&x=1');
    assert.equal(redactDatabaseUrl('sqlite:./data/sis.db'), 'sqlite:./data/sis.db');
  });

  test('the URL chooses the dialect, and the opened store carries it', async (t) => {
    // What the service and the CLI ask before opening (app.ts, cli-store.ts) follows the URL alone.
    const file = dialectFor('sqlite:./data/sis.db');
    assert.deepEqual(
      [file.name, file.isServer, file.pooled, file.statementTimeoutLimitsRuns],
      ['sqlite', false, false, false],
    );
    assert.equal(dialectFor('data/x.db'), file);
    const server = dialectFor('postgresql://u:p@h/db?schema=a');
    assert.deepEqual(
      [server.name, server.isServer, server.pooled, server.statementTimeoutLimitsRuns],
      ['postgres', true, true, true],
    );
    assert.throws(() => dialectFor('mysql://h/db'), DatabaseUrlError);
    for (const target of storeTargets) {
      await t.test(target.name, async (t) => {
        if (target.skip !== null) return t.skip(target.skip);
        const db = await target.fresh();
        const store = await openStore(db.url);
        try {
          assert.equal(store.dialect, dialectFor(db.url));
        } finally {
          await store.close();
        }
      });
    }
  });

  test('the demo dataset is the example file', async () => {
    const { readFile } = await import('node:fs/promises');
    const example = JSON.parse(await readFile(join(repoRoot, 'examples', 'dataset.json'), 'utf8')) as Dataset;
    assert.deepEqual(DEMO_DATASET, example);
  });
});

describe('a PostgreSQL schema with an odd name', { skip: POSTGRES_SKIP ?? undefined }, () => {
  const schema = `sis test "odd" ${process.pid}`;
  const quoted = `"${schema.replace(/"/g, '""')}"`;
  after(async () => void (await (await adminClient()).query(`drop schema if exists ${quoted} cascade`)));

  test('holds the tables, answers reads and takes a streamed (COPY) import', async () => {
    const url = `${postgresUrl}${postgresUrl.includes('?') ? '&' : '?'}schema=${encodeURIComponent(schema)}`;
    const store = await openStore(url);
    try {
      await store.admin.importStream(jsonDatasetSource(text(JSON.stringify(DEMO_DATASET))));
      assert.equal(await store.deviceToken('1'), 'tok-AAA-111');
      const admin = await adminClient();
      const { rows } = await admin.query<{ n: string }>(`select count(*)::text as n from ${quoted}.students`);
      assert.equal(rows[0]!.n, String(DEMO_DATASET.students!.length));
    } finally {
      await store.close();
    }
  });
});
