/**
 * The one database session a bulk import runs on (its temporary staging tables belong to it).
 * By default a connection of the store, through Kysely; PostgreSQL's opener gives a pool client
 * of its own instead, so that rows can be streamed in with `COPY ... FROM STDIN`
 * (postgres/postgres-bulk-session.ts), which Kysely cannot do.
 */
import { CompiledQuery } from 'kysely';
import type { Kysely } from 'kysely';
import type { Dialect } from '../schema/dialect.js';
import type { Database } from '../schema/tables.js';

export interface BulkSession {
  readonly dialect: Dialect;
  /** Runs one statement written with `?` placeholders (the dialect's own are made here). */
  run(text: string, parameters?: readonly unknown[]): Promise<{ readonly rows: readonly unknown[] }>;
  /** Where the session can stream rows in: starts `statement` (a `COPY ... FROM STDIN`) and returns where its text goes. */
  readonly copyIn?: (statement: string) => CopyIn;
}

/** The text of a running COPY, in COPY's text format. */
export interface CopyIn {
  /** Resolves once more text may be written (back-pressure); rejects with the server's error. */
  write(text: string): Promise<void>;
  /** Ends the COPY; resolves once the server has taken every row. */
  end(): Promise<void>;
}

/** Runs `work` on one session, given back (a pool client: closed if the work failed) when it is done. */
export type WithBulkSession = <T>(work: (session: BulkSession) => Promise<T>) => Promise<T>;

/** A session on one Kysely connection. */
export function kyselyBulkSession(db: Kysely<Database>, dialect: Dialect): WithBulkSession {
  return (work) =>
    db.connection().execute((conn) =>
      work({
        dialect,
        run: async (text, parameters = []) =>
          conn.executeQuery(CompiledQuery.raw(dialect.staging.placeholders(text), [...parameters])),
      }),
    );
}
