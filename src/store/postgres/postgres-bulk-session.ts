/**
 * PostgreSQL's bulk import session: a client of the pool of its own (the store's search path is a
 * startup parameter of every connection), on which rows are streamed in with `COPY ... FROM STDIN`
 * (pg-copy-streams), which Kysely cannot do.
 */
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import type { CopyIn, WithBulkSession } from '../import/bulk-session.js';
import { postgres } from './postgres-dialect.js';
import type { ConnectionSource } from './postgres-hosts.js';

export function postgresBulkSession(pool: ConnectionSource): WithBulkSession {
  return async (work) => {
    const { from: copyFrom } = await import('pg-copy-streams');
    const client = await pool.connect();
    let failure: Error | undefined;
    try {
      // For this session only: the merge's sort by key and the duplicate search's grouping of a
      // million rows done in memory rather than in temporary files, and the staging tables kept in
      // memory too (PostgreSQL's defaults are 4 MB and 8 MB; this is the server's memory, once).
      await client.query(`set work_mem = '128MB'; set temp_buffers = '128MB'`);
      return await work({
        dialect: postgres,
        run: async (text, parameters = []) => client.query(postgres.staging.placeholders(text), [...parameters]),
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
