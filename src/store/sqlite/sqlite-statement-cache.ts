import type BetterSqlite3 from 'better-sqlite3';

/**
 * Kysely's SQLite driver prepares a statement for every query it runs, which costs more than
 * running it; the service repeats a handful of queries, so prepared statements are reused here,
 * keyed by their SQL. A statement still being iterated (a streamed export) is never handed out a
 * second time: a fresh one is prepared for that caller instead.
 */
export function reuseStatements(database: BetterSqlite3.Database, max = 256): BetterSqlite3.Database {
  const cache = new Map<string, BetterSqlite3.Statement>();
  const prepare = database.prepare.bind(database);
  unshared.set(database, prepare);
  const cached = (source: string): BetterSqlite3.Statement => {
    const hit = cache.get(source);
    if (hit !== undefined && !hit.busy) return hit;
    const statement = prepare(source);
    if (hit === undefined) {
      if (cache.size >= max) cache.delete(cache.keys().next().value!);
      cache.set(source, statement);
    }
    return statement;
  };
  database.prepare = cached as typeof database.prepare;
  return database;
}

const unshared = new WeakMap<BetterSqlite3.Database, (source: string) => BetterSqlite3.Statement>();

/**
 * Single values by key (`pluck` mode) on statements of their own: a mode set on a shared
 * statement would stay for the next caller of the same SQL (Kysely sets none). Keyed by the
 * store's own compiled queries, a handful, so the map needs no bound.
 */
export function valueReader(
  database: BetterSqlite3.Database,
): (source: string, parameters: readonly unknown[]) => unknown {
  const prepare = unshared.get(database) ?? database.prepare.bind(database);
  const plucked = new Map<string, BetterSqlite3.Statement>();
  return (source, parameters) => {
    let statement = plucked.get(source);
    if (statement === undefined) {
      statement = prepare(source).pluck(true);
      plucked.set(source, statement);
    }
    return statement.get(parameters);
  };
}
