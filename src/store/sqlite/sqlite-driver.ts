/**
 * Node's built-in SQLite (`node:sqlite`) as the store's connection: the shape Kysely's
 * SqliteDialect drives (`prepare` giving statements with `reader`, `all`, `run`, `iterate`),
 * prepared statements reused by their SQL, rows as arrays or objects per call, and
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

/**
 * One prepared statement; its rows come as arrays or objects, whichever the call asks for. node:sqlite
 * reads them as arrays, always: objects are made here from the column names, plain objects as
 * PostgreSQL's rows are (node:sqlite's own have no prototype), and made faster so than node:sqlite
 * makes its own (bench/RESULTS.md, the drivers compared).
 */
export class SqliteStatement {
  /** True for statements that return rows (Kysely then calls `all`, else `run`). */
  readonly reader: boolean;
  readonly #statement: StatementSync;
  #names: readonly string[];
  #iterating = 0;

  constructor(statement: StatementSync) {
    this.#statement = statement;
    statement.setReturnArrays(true);
    this.#names = statement.columns().map((c) => c.name);
    this.reader = this.#names.length > 0;
  }

  /** True while an `iterate` over it is not finished: it may not be run again meanwhile. */
  get busy(): boolean {
    return this.#iterating > 0;
  }

  all(parameters: Parameters, arrays = false): unknown[] {
    const rows = this.#statement.all(...bound(parameters)) as unknown as unknown[][];
    return arrays ? rows : rows.map((row) => this.#object(row));
  }

  get(parameters: Parameters, arrays = false): unknown {
    const row = this.#statement.get(...bound(parameters)) as unknown as unknown[] | undefined;
    return arrays || row === undefined ? row : this.#object(row);
  }

  run(parameters: Parameters): { changes: number; lastInsertRowid: number | bigint } {
    const { changes, lastInsertRowid } = this.#statement.run(...bound(parameters));
    return { changes: Number(changes), lastInsertRowid };
  }

  *iterate(parameters: Parameters): IterableIterator<unknown> {
    this.#iterating++;
    try {
      for (const row of this.#statement.iterate(...bound(parameters))) yield this.#object(row as unknown as unknown[]);
    } finally {
      this.#iterating--;
    }
  }

  #object(row: readonly unknown[]): Record<string, unknown> {
    // SQLite prepares a statement again after a schema change (`select *` then has other columns).
    if (row.length !== this.#names.length) this.#names = this.#statement.columns().map((c) => c.name);
    const names = this.#names;
    const object: Record<string, unknown> = {};
    for (let i = 0; i < names.length; i++) object[names[i]!] = row[i];
    return object;
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

/** node:sqlite binds each value as an argument of its own; the store passes only values SQLite takes. */
function bound(parameters: Parameters): SQLInputValue[] {
  return parameters as SQLInputValue[];
}
