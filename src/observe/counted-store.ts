import { forwardMethods } from '../store/forward-store.js';
import type { Store } from '../store/store.js';

/** A store that counts its calls in progress. */
export type CountedStore = Store & { readonly inFlight: number };

/**
 * Told how each call ended: the database's state is watched through them (database-watch.ts).
 * Whether the database takes writes again is told by the operations that write (their `writes`
 * flag, read by the dispatcher), not by the names of store methods.
 */
export interface StoreObserver {
  /** `startedAt` (ms since the epoch): when the call began, so a call begun before a change of state tells nothing of it. */
  succeeded(startedAt: number): void;
  failed(error: unknown, startedAt: number): void;
}

/**
 * Wraps a store to count its calls in progress, for the `sis_db_calls_in_flight` gauge (the store
 * does not expose its pool, and calls in progress are what the pool is busy with), and to tell an
 * observer how each ended. A call is in progress from its start until its promise settles;
 * synchronous answers (SQLite's reads and data version) and iterables (streamed lists) are handed
 * back as they are, told as successes but not counted in progress. The answer's promise is
 * returned as it is, with no extra hop.
 */
export function countedStore(inner: Store, observer: StoreObserver | null = null): CountedStore {
  let inFlight = 0;
  const failed = (error: unknown, startedAt: number): void => {
    inFlight--;
    observer?.failed(error, startedAt);
  };
  const succeeded = (startedAt: number): void => {
    inFlight--;
    observer?.succeeded(startedAt);
  };
  const store = forwardMethods<Store>(
    inner,
    () => inner,
    (call) => {
      const startedAt = Date.now();
      let result: unknown;
      try {
        result = call();
      } catch (error) {
        observer?.failed(error, startedAt);
        throw error;
      }
      if (result instanceof Promise) {
        inFlight++;
        result.then(
          () => succeeded(startedAt),
          (error: unknown) => failed(error, startedAt),
        );
      } else if (!isAsyncIterable(result)) {
        // Read at once (SQLite): a success now. A streamed list has read nothing yet.
        observer?.succeeded(startedAt);
      }
      return result;
    },
  );
  return Object.defineProperty(store, 'inFlight', { get: () => inFlight, enumerable: true }) as CountedStore;
}

function isAsyncIterable(value: unknown): boolean {
  return typeof value === 'object' && value !== null && Symbol.asyncIterator in value;
}
