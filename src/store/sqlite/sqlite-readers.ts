/**
 * Read-only SQLite connections for snapshot reads. WAL lets them read while the main connection
 * (and imports in other processes) write, and a read transaction on one of them sees one state of
 * the database until it ends. The main connection cannot serve that: it is shared by every
 * request, and a transaction left open across pages would also hold its writes.
 *
 * Opened when first needed, kept for reuse (at most `keep` idle), closed with the store.
 */
import type { SnapshotRead } from '../sql/engine-parts.js';
import { SqliteConnection } from './sqlite-driver.js';

export interface SqliteReadersOptions {
  /** Idle connections kept for the next read; more are opened when needed and closed after. */
  readonly keep: number;
  /** Busy timeout, as for the main connection. */
  readonly timeoutMs: number;
}

export class SqliteReaders {
  readonly #path: string;
  readonly #options: SqliteReadersOptions;
  readonly #idle: SqliteConnection[] = [];
  #lent = 0;
  #closed = false;

  constructor(path: string, options: SqliteReadersOptions) {
    this.#path = path;
    this.#options = options;
  }

  /** Connections open now: lent and idle (tests check that a cut answer gave its own back). */
  get open(): number {
    return this.#lent + this.#idle.length;
  }

  get lent(): number {
    return this.#lent;
  }

  /** Begins a read transaction on a connection of its own; the snapshot is taken by its first query. */
  begin(): SnapshotRead {
    if (this.#closed) throw new Error('the store is closed');
    const db = this.#idle.pop() ?? this.#connect();
    this.#lent++;
    try {
      db.exec('begin');
    } catch (error) {
      this.#giveBack(db);
      throw error;
    }
    let ended = false;
    return {
      rows: async (query) => db.prepare(query.sql).all(query.parameters, true) as unknown[][],
      end: async () => {
        if (ended) return;
        ended = true;
        if (db.open && db.inTransaction) {
          try {
            db.exec('rollback');
          } catch {
            // The connection is dropped below if it cannot end its transaction.
          }
        }
        this.#giveBack(db);
      },
    };
  }

  /** Closes idle connections now; lent ones close when they come back. */
  close(): void {
    this.#closed = true;
    for (const db of this.#idle.splice(0)) db.close();
  }

  #connect(): SqliteConnection {
    return new SqliteConnection(this.#path, { readOnly: true, timeoutMs: this.#options.timeoutMs }, 16);
  }

  #giveBack(db: SqliteConnection): void {
    this.#lent--;
    if (!this.#closed && db.open && !db.inTransaction && this.#idle.length < this.#options.keep) this.#idle.push(db);
    else if (db.open) db.close();
  }
}
