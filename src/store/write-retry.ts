/**
 * A write tried again while the database refuses writes for a while: a PostgreSQL switchover (the
 * old primary answers 25006 until the address or the pool moves to the new one), a server
 * restarting, a network that drops it; SQLite's file read-only. Only work that may run again whole
 * is given here: one statement or one transaction, whose failure rolled it back (or, where a lost
 * answer hides whether it committed, whose second run finds it done).
 */
import { databaseCondition } from './db-errors.js';
import type { DatabaseCondition } from './db-errors.js';

export interface WriteRetry {
  /** How long after the first failure to keep trying; 0: never again. */
  readonly boundMs: number;
  /** Before each wait: the failure, the try that failed (1 for the first), and the wait. */
  readonly onRetry?: (failure: { error: unknown; attempt: number; delayMs: number }) => void;
  /** First wait (default 250 ms), doubling up to 2 s. */
  readonly initialDelayMs?: number;
  /** Ends the waiting: the last failure is thrown at once. */
  readonly signal?: AbortSignal;
}

/** The failures worth another try: the database refuses writes or does not answer, for now. */
export function isUnwritable(error: unknown): boolean {
  const condition: DatabaseCondition | null = databaseCondition(error);
  return condition === 'read-only' || condition === 'unavailable';
}

/**
 * Runs `work`, and again after a growing wait while it fails because the database is read-only or
 * unavailable, until `boundMs` after the first failure; then throws the last failure. Any other
 * failure is thrown at once. Each try takes a connection of its own from the pool (PostgreSQL:
 * the pool never hands out again one that answered 25006 or found a standby).
 */
export async function retryWrite<T>(work: () => Promise<T>, retry: WriteRetry): Promise<T> {
  let deadline: number | null = null;
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (!isUnwritable(error)) throw error;
      deadline ??= Date.now() + retry.boundMs;
      const left = deadline - Date.now();
      if (left <= 0 || retry.signal?.aborted === true) throw error;
      const delayMs = Math.min(left, Math.min(2000, (retry.initialDelayMs ?? 250) * 2 ** (attempt - 1)));
      retry.onRetry?.({ error, attempt, delayMs });
      if (!(await wait(delayMs, retry.signal))) throw error;
    }
  }
}

/** False when `signal` ended the wait. */
function wait(ms: number, signal: AbortSignal | undefined): Promise<boolean> {
  return new Promise((resolve) => {
    const done = (waited: boolean): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', aborted);
      resolve(waited);
    };
    const aborted = (): void => done(false);
    const timer = setTimeout(() => done(true), ms);
    signal?.addEventListener('abort', aborted, { once: true });
  });
}
