/**
 * PostgreSQL's data version (Store.dataVersion, what the answer cache keys its answers with): a token
 * read before the data, which moves with every commit that may change what a cached answer holds.
 */
import type { QueryArrayConfig, QueryArrayResult } from 'pg';
import type { DataVersionReader } from '../sql/engine-parts.js';

/**
 * PostgreSQL: the `students` row of sis_data_versions, which a trigger moves in the transaction of
 * every statement writing the students table (migration 4): one primary-key lookup, a named
 * statement (parsed once per connection), straight on the pool (under its deadlines, postgres-deadlines.ts), shared by the requests that
 * arrive while one is in flight (see `shared`). Null when the row is missing
 * (nothing is kept then).
 */
export function postgresDataVersion(pool: ArrayQueries, schema: string | null): DataVersionReader {
  const table = schema === null ? 'sis_data_versions' : `"${schema.replace(/"/g, '""')}".sis_data_versions`;
  const query = {
    name: 'sis_data_version',
    text: `select version::text from ${table} where name = 'students'`,
    rowMode: 'array' as const,
  };
  return shared(() => pool.queryArray<[string]>(query).then((result) => result.rows[0]?.[0] ?? null));
}

/** One query whose rows are arrays, on a pooled connection. */
export interface ArrayQueries {
  queryArray<R extends unknown[]>(config: QueryArrayConfig): Promise<QueryArrayResult<R>>;
}

/** Longest a caller waits for the read in flight to end before its own begins anyway: one stuck connection must not hold every list. */
const MAX_WAIT_MS = 20;

/**
 * A read that callers arriving while one is in flight share: they wait for the next, begun as
 * soon as the one in flight ends (or after MAX_WAIT_MS). That read begins after each of them
 * asked, so it is as new as each request needs (the version is read before the data, never
 * before the request); under load the database answers about one lookup per round trip instead
 * of one per request.
 */
export function shared(read: () => Promise<string | null>): () => Promise<string | null> {
  let current: Promise<string | null> | null = null;
  let next: Promise<string | null> | null = null;
  const start = (): Promise<string | null> => {
    let reading: Promise<string | null>;
    try {
      reading = read();
    } catch (error) {
      reading = Promise.reject(error as Error);
    }
    const done = (): void => {
      if (current === reading) current = null;
    };
    reading.then(done, done);
    current = reading;
    return reading;
  };
  const after = (inFlight: Promise<unknown>): Promise<string | null> =>
    new Promise((resolve) => {
      let begun = false;
      const begin = (): void => {
        if (begun) return;
        begun = true;
        clearTimeout(timer);
        next = null;
        resolve(start());
      };
      const timer = setTimeout(begin, MAX_WAIT_MS);
      inFlight.then(begin, begin);
    });
  return () => {
    if (current === null) return start();
    next ??= after(current);
    return next;
  };
}
