/**
 * Opening a store that may not be there yet (PostgreSQL starting, failing over, a network not up):
 * retry with exponential back-off while the failure is one that time can cure, give up at once on
 * one it cannot (a wrong URL, a wrong password, a database newer than the program).
 */
import { isTransientDatabaseError } from '../db-errors.js';
import type { SqlStore } from '../sql/sql-store.js';
import { openStore } from './open-store.js';
import type { OpenStoreOptions } from './open-store.js';

export { isConnectionLost, isTransientDatabaseError } from '../db-errors.js';

export interface RetryOptions {
  /** Stops waiting: the promise rejects with the signal's reason. */
  readonly signal?: AbortSignal;
  /** Called after each failed attempt that will be retried, before the wait. */
  readonly onAttemptFailed?: (failure: AttemptFailure) => void;
  /** First wait (default 250 ms); each next one doubles, up to `maxDelayMs`. */
  readonly initialDelayMs?: number;
  /** Longest wait between attempts (default 5000 ms). */
  readonly maxDelayMs?: number;
}

export interface AttemptFailure {
  readonly error: unknown;
  /** 1 for the first attempt. */
  readonly attempt: number;
  /** How long until the next attempt. */
  readonly delayMs: number;
}

export async function openStoreWithRetry(
  url: string,
  options: OpenStoreOptions = {},
  retry: RetryOptions = {},
): Promise<SqlStore> {
  const { signal, onAttemptFailed } = retry;
  const initial = retry.initialDelayMs ?? 250;
  const max = retry.maxDelayMs ?? 5000;
  for (let attempt = 1; ; attempt++) {
    signal?.throwIfAborted();
    let store: SqlStore;
    try {
      store = await openStore(url, options);
    } catch (error) {
      if (!isTransientDatabaseError(error)) throw error;
      // Jitter keeps instances that lost the database together from returning together.
      const delayMs = Math.round(Math.min(max, initial * 2 ** (attempt - 1)) * (0.8 + 0.4 * Math.random()));
      onAttemptFailed?.({ error, attempt, delayMs });
      await sleep(delayMs, signal);
      continue;
    }
    if (signal?.aborted === true) {
      await store.close();
      signal.throwIfAborted();
    }
    return store;
  }
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted === true) return reject(signal.reason);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
