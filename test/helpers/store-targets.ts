/**
 * Both stores for tests that loop over them: SQLite on a temporary file always, PostgreSQL when
 * SIS_TEST_POSTGRES_URL is set, each database a fresh schema (dropped by `cleanup`).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import type { SQLInputValue } from 'node:sqlite';
import pg from 'pg';
import { openStore } from '../../src/store/open/open-store.js';
import type { SqlStore } from '../../src/store/sql/sql-store.js';

export type Row = Record<string, unknown>;

export interface FreshDatabase {
  /** The database URL (PostgreSQL: with `?schema=`), as SIS_DATABASE_URL takes it. */
  readonly url: string;
  /** Runs SQL outside the store; returns the rows of the statement. */
  sql(text: string, params?: readonly unknown[]): Promise<Row[]>;
}

export interface StoreTarget {
  readonly name: 'SQLite' | 'PostgreSQL';
  /** Why this target is skipped, or null. */
  readonly skip: string | null;
  fresh(): Promise<FreshDatabase>;
}

export const postgresUrl = process.env['SIS_TEST_POSTGRES_URL'] ?? '';
export const POSTGRES_SKIP = postgresUrl === '' ? 'SIS_TEST_POSTGRES_URL not set: PostgreSQL tests skipped' : null;

const tempDir = mkdtempSync(join(tmpdir(), 'sis-targets-'));
const schemas: string[] = [];
let admin: pg.Client | null = null;
let counter = 0;

/** A PostgreSQL client outside any store (for checks, fault injection and cleanup). */
export async function adminClient(): Promise<pg.Client> {
  if (admin === null) {
    admin = new pg.Client({ connectionString: postgresUrl });
    await admin.connect();
  }
  return admin;
}

/** A new schema name, dropped by `cleanup`, and the URL that selects it. */
export function newSchema(label: string): { schema: string; url: string } {
  const schema = `sis_test_${process.pid}_${label}_${++counter}_${Math.random().toString(36).slice(2, 8)}`;
  schemas.push(schema);
  return { schema, url: `${postgresUrl}${postgresUrl.includes('?') ? '&' : '?'}schema=${schema}` };
}

export const sqliteTarget: StoreTarget = {
  name: 'SQLite',
  skip: null,
  async fresh() {
    const path = join(tempDir, `db-${++counter}`, 'sis.db');
    return {
      url: `sqlite:${path}`,
      async sql(text, params = []) {
        const db = new DatabaseSync(path);
        try {
          const stmt = db.prepare(text);
          const values = params as SQLInputValue[];
          // Plain objects, as PostgreSQL's rows are (node:sqlite's have no prototype).
          if (stmt.columns().length > 0) return stmt.all(...values).map((row) => ({ ...row })) as Row[];
          stmt.run(...values);
          return [];
        } finally {
          db.close();
        }
      },
    };
  },
};

export const postgresTarget: StoreTarget = {
  name: 'PostgreSQL',
  skip: POSTGRES_SKIP,
  async fresh() {
    const client = await adminClient();
    const { schema, url } = newSchema('db');
    return {
      url,
      async sql(text, params = []) {
        await client.query(`set search_path to "${schema}"`);
        try {
          return (await client.query<Row>(text, [...params])).rows;
        } finally {
          await client.query('set search_path to default');
        }
      },
    };
  },
};

export const storeTargets: readonly StoreTarget[] = [sqliteTarget, postgresTarget];

/** Drops the schemas and files the targets made; call from `after`. */
export async function cleanupTargets(): Promise<void> {
  if (admin !== null) {
    for (const schema of schemas.splice(0)) await admin.query(`drop schema if exists "${schema}" cascade`);
    await admin.end();
    admin = null;
  }
  rmSync(tempDir, { recursive: true, force: true });
}

/** Runs `body` with a store opened on a fresh database of `target`, closing it afterwards. */
export async function withFreshStore(
  target: StoreTarget,
  body: (store: SqlStore, db: FreshDatabase) => Promise<void>,
): Promise<void> {
  const db = await target.fresh();
  const store = await openStore(db.url, { poolSize: 4 });
  try {
    await body(store, db);
  } finally {
    await store.close();
  }
}
