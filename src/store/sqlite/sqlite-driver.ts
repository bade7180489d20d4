/**
 * Node's built-in SQLite (`node:sqlite`) as the store's connection: the shape Kysely's
 * SqliteDialect drives (`prepare` giving statements with `reader`, `all`, `run`, `iterate`),
 * prepared statements reused by their SQL, rows as arrays or objects per call, single values, and
 * a synchronous IMMEDIATE transaction. Nothing to build or install: the driver ships with Node.
 */
import type { DatabaseSync, SQLInputValue, StatementSync } from 'node:sqlite';
import { loadNodeSqlite } from './node-sqlite.js';

export interface SqliteOptions {
  /** Busy timeout in milliseconds: how long a statement waits for another connection's lock. */
  readonly timeoutMs: number;
  /** Opened read-only (snapshot readers); the file must exist. */
  readonly readOnly?: boolean;
}

type Parameters = readonly unknown[];

/** One prepared statement; its rows come as arrays or objects, whichever the call asks for. */
export class SqliteStatement {
  /** True for statements that return rows (Kysely then calls `all`, else `run`). */
  readonly reader: boolean;
  readonly #statement: StatementSync;
  #arrays = false;
  #iterating = 0;

  constructor(statement: StatementSync) {
    this.#statement = statement;
    this.reader = statement.columns().length > 0;
  }

  /** True while an `iterate` over it is not finished: it may not be run again meanwhile. */
  get busy(): boolean {
    return this.#iterating > 0;
  }

  all(parameters: Parameters, arrays = false): unknown[] {
    const rows = this.#mode(arrays).all(...bound(parameters));
    return arrays ? rows : rows.map(plain);
  }

  get(parameters: Parameters, arrays = false): unknown {
    const row = this.#mode(arrays).get(...bound(parameters));
    return arrays || row === undefined ? row : plain(row);
  }

  run(parameters: Parameters): { changes: number; lastInsertRowid: number | bigint } {
    const { changes, lastInsertRowid } = this.#statement.run(...bound(parameters));
    return { changes: Number(changes), lastInsertRowid };
  }

  *iterate(parameters: Parameters): IterableIterator<unknown> {
    this.#iterating++;
    try {
      for (const row of this.#mode(false).iterate(...bound(parameters))) yield plain(row);
    } finally {
      this.#iterating--;
    }
  }

  #mode(arrays: boolean): StatementSync {
    // A native call only when the mode changes: most statements are always read one way.
    if (arrays !== this.#arrays) {
      this.#statement.setReturnArrays(arrays);
      this.#arrays = arrays;
    }
    return this.#statement;
  }
}

/**
 * One connection. `prepare` reuses statements by their SQL (at most `maxStatements`, the oldest
 * dropped first): Kysely prepares a statement for every query it runs, which costs more than
 * running it, and the service repeats a handful of queries. A statement still being iterated (a
 * streamed export) is never handed out a second time: that caller gets a fresh one.
 */
export class SqliteConnection {
  readonly #database: DatabaseSync;
  readonly #cache = new Map<string, SqliteStatement>();
  readonly #maxStatements: number;
  #control: { begin: StatementSync; commit: StatementSync; rollback: StatementSync } | null = null;

  constructor(path: string, options: SqliteOptions, maxStatements = 256) {
    const { DatabaseSync: Database } = loadNodeSqlite();
    this.#database = new Database(path, { timeout: options.timeoutMs, readOnly: options.readOnly === true });
    this.#maxStatements = maxStatements;
  }

  get open(): boolean {
    return this.#database.isOpen;
  }

  get inTransaction(): boolean {
    return this.#database.isTransaction;
  }

  prepare(source: string): SqliteStatement {
    const hit = this.#cache.get(source);
    if (hit !== undefined && !hit.busy) return hit;
    const statement = this.unshared(source);
    if (hit === undefined) {
      if (this.#cache.size >= this.#maxStatements) this.#cache.delete(this.#cache.keys().next().value!);
      this.#cache.set(source, statement);
    }
    return statement;
  }

  /** A statement of the caller's own, outside the cache. */
  unshared(source: string): SqliteStatement {
    return new SqliteStatement(this.#database.prepare(source));
  }

  exec(source: string): void {
    this.#database.exec(source);
  }

  /** A pragma's first row as an array (`pragma busy_timeout` -> [5000]). */
  pragma(source: string): unknown[] | undefined {
    return this.unshared(`pragma ${source}`).get([], true) as unknown[] | undefined;
  }

  /**
   * `work` inside BEGIN IMMEDIATE … COMMIT, rolled back if it throws: the write lock is taken
   * before anything is read. The caller makes sure no transaction is open already.
   */
  immediate<T>(work: () => T): T {
    this.#control ??= {
      begin: this.#database.prepare('begin immediate'),
      commit: this.#database.prepare('commit'),
      rollback: this.#database.prepare('rollback'),
    };
    this.#control.begin.run();
    try {
      const result = work();
      this.#control.commit.run();
      return result;
    } catch (error) {
      // SQLite may have rolled back already (a full disk, a busy commit).
      if (this.#database.isTransaction) this.#control.rollback.run();
      throw error;
    }
  }

  close(): void {
    this.#cache.clear();
    this.#control = null;
    if (this.#database.isOpen) this.#database.close();
  }
}

/**
 * node:sqlite's row objects have no prototype; the store's callers get plain objects, as from
 * PostgreSQL (and as before from better-sqlite3). Rows read as arrays need no copy.
 */
function plain(row: object): object {
  return { ...row };
}

/** node:sqlite binds each value as an argument of its own; the store passes only values SQLite takes. */
function bound(parameters: Parameters): SQLInputValue[] {
  return parameters as SQLInputValue[];
}
