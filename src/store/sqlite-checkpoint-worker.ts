/**
 * Runs in a worker thread (see sqlite-checkpointer.ts): copies the WAL back into the database
 * file now and then, on a connection of its own, so the fsyncs this needs never stall the
 * thread that answers requests. PASSIVE: it never waits for, nor blocks, readers or writers.
 */
import { parentPort, workerData } from 'node:worker_threads';
import BetterSqlite3 from 'better-sqlite3';

const { path, intervalMs } = workerData as { path: string; intervalMs: number };
const database = new BetterSqlite3(path, { timeout: 0 });
// A failure is thrown out of the thread: the main connection then takes checkpoints back over.
const checkpoint = (): void => void database.pragma('wal_checkpoint(PASSIVE)');
const timer = setInterval(checkpoint, intervalMs);
parentPort?.on('message', (message: unknown) => {
  if (message !== 'stop') return;
  clearInterval(timer);
  try {
    checkpoint();
  } finally {
    database.close();
    parentPort?.close();
  }
});
