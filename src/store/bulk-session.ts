/**
 * The one database session a bulk import runs on (its temporary staging tables belong to it).
 * SQLite: the store's connection, through Kysely. PostgreSQL: a client of its own from the pool, so
 * that rows can be streamed in with `COPY ... FROM STDIN` (pg-copy-streams), which Kysely cannot do.
 */
import { once } from 'node:events';
import { finished } from 'node:stream/promises';
import type { Writable } from 'node:stream';
import { CompiledQuery } from 'kysely';
import type { Kysely } from 'kysely';
import type { Pool } from 'pg';
import type { Database, DialectName } from './schema.js';

export interface BulkSession {
  readonly dialect: DialectName;
  /** Runs one statement written with `?` placeholders (PostgreSQL's `$n` are made here). */
  run(text: string, parameters?: readonly unknown[]): Promise<{ readonly rows: readonly unknown[] }>;
  /** PostgreSQL: starts `statement` (a `COPY ... FROM STDIN`) and returns where its text goes. */
  readonly copyIn?: (statement: string) => CopyIn;
}

/** The text of a running COPY, in COPY's text format. */
export interface CopyIn {
  /** Resolves once more text may be written (back-pressure); rejects with the server's error. */
  write(text: string): Promise<void>;
  /** Ends the COPY; resolves once the server has taken every row. */
  end(): Promise<void>;
}

/** Runs `work` on one session, given back (PostgreSQL: closed if the work failed) when it is done. */
export type WithBulkSession = <T>(work: (session: BulkSession) => Promise<T>) => Promise<T>;

/** `?` placeholders become PostgreSQL's `$n`; no SQL text of the bulk import contains a literal question mark. */
function numbered(dialect: DialectName, text: string): string {
  let n = 0;
  return dialect === 'postgres' ? text.replace(/\?/g, () => `$${++n}`) : text;
}

/** A session on one Kysely connection (SQLite). */
export function kyselyBulkSession(db: Kysely<Database>, dialect: DialectName): WithBulkSession {
  return (work) =>
    db.connection().execute((conn) =>
      work({
        dialect,
        run: async (text, parameters = []) => conn.executeQuery(CompiledQuery.raw(numbered(dialect, text), [...parameters])),
      }),
    );
}

/** A session on a client of the pool, with the store's search path, and COPY. */
export function postgresBulkSession(pool: Pool, schema: string | null): WithBulkSession {
  return async (work) => {
    const { from: copyFrom } = await import('pg-copy-streams');
    const client = await pool.connect();
    let failure: Error | undefined;
    try {
      if (schema !== null) await client.query(`set search_path to "${schema.replace(/"/g, '""')}"`);
      // For this session only: the merge's sort by key and the duplicate search's grouping of a
      // million rows done in memory rather than in temporary files, and the staging tables kept in
      // memory too (PostgreSQL's defaults are 4 MB and 8 MB; this is the server's memory, once).
      await client.query(`set work_mem = '128MB'; set temp_buffers = '128MB'`);
      return await work({
        dialect: 'postgres',
        run: async (text, parameters = []) => client.query(numbered('postgres', text), [...parameters]),
        copyIn: (statement) => copyWriter(client.query(copyFrom(statement))),
      });
    } catch (error) {
      failure = error instanceof Error ? error : new Error(String(error));
      throw error;
    } finally {
      // A session that failed may be mid-COPY or mid-transaction: it is closed, not handed to a request.
      client.release(failure);
    }
  };
}

function copyWriter(stream: Writable): CopyIn {
  let failure: unknown = null;
  // Kept until the next write or the end reports it; until then it must not count as unhandled.
  stream.on('error', (error) => (failure ??= error));
  return {
    async write(text) {
      if (failure !== null) throw failure;
      if (!stream.write(text)) await once(stream, 'drain');
    },
    async end() {
      if (failure !== null) throw failure;
      stream.end();
      await finished(stream);
    },
  };
}
