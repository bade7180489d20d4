/**
 * WAL checkpoints off the request path. SQLite copies the write-ahead log back into the database
 * file from inside a commit once the log passes 1,000 pages, and that copy fsyncs twice: with
 * AuthCode's small transactions, one request in fifty or so paid for it, and every request
 * waiting behind it too. In the serving process the main connection stops checkpointing and a
 * worker thread does it every `intervalMs` instead. Should the worker fail or stop, the main
 * connection checkpoints itself again, so the log can never grow without bound.
 */
import { Worker } from 'node:worker_threads';
import type BetterSqlite3 from 'better-sqlite3';

const AUTO_CHECKPOINT_PAGES = 1000; // SQLite's default

export class SqliteCheckpointer {
  readonly #worker: Worker;
  #stopped = false;
  #alive = true;

  private constructor(worker: Worker, database: BetterSqlite3.Database) {
    this.#worker = worker;
    const takeBack = (): void => {
      this.#alive = false;
      if (database.open) database.pragma(`wal_autocheckpoint = ${AUTO_CHECKPOINT_PAGES}`);
    };
    // An error ends the thread: 'exit' follows it.
    worker.on('error', () => undefined);
    worker.once('exit', takeBack);
    // The thread must not keep a finished process alive.
    worker.unref();
  }

  /** Starts the worker; the main connection checkpoints no more once it is running. */
  static async start(database: BetterSqlite3.Database, path: string, intervalMs = 100): Promise<SqliteCheckpointer> {
    const worker = new Worker(new URL('./sqlite-checkpoint-worker.js', import.meta.url), { workerData: { path, intervalMs } });
    await new Promise<void>((resolve, reject) => {
      worker.once('online', resolve);
      worker.once('error', reject);
    });
    database.pragma('wal_autocheckpoint = 0');
    return new SqliteCheckpointer(worker, database);
  }

  /** A last checkpoint, then the worker's connection closes. */
  async close(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    if (!this.#alive) return;
    const exited = new Promise<void>((resolve) => this.#worker.once('exit', () => resolve()));
    // Waited for: the process must not end before the last checkpoint and the close.
    this.#worker.ref();
    this.#worker.postMessage('stop');
    await exited;
  }

  /** Checkpointing in its thread, as opposed to stopped or failed (the main connection then does it). */
  get running(): boolean {
    return this.#alive && !this.#stopped;
  }

  /** Ends the thread as a crash would (tests). */
  async terminate(): Promise<void> {
    await this.#worker.terminate();
  }
}
