import { forwardMethods } from '../store/forward-store.js';
import type { Store } from '../store/store.js';

/** A store that counts its calls in progress. */
export type CountedStore = Store & { readonly inFlight: number };

/**
 * Wraps a store to count its calls in progress, for the `sis_db_calls_in_flight` gauge: the store
 * does not expose its pool, and calls in progress are what the pool is busy with. A call is in
 * progress from its start until its promise settles; synchronous answers (SQLite's data version)
 * and iterables (streamed lists) are handed back as they are, uncounted. The answer's promise is
 * returned as it is, with no extra hop.
 */
export function countedStore(inner: Store): CountedStore {
  let inFlight = 0;
  const done = (): void => {
    inFlight--;
  };
  const store = forwardMethods<Store>(inner, () => inner, (call) => {
    const result = call();
    if (result instanceof Promise) {
      inFlight++;
      result.then(done, done);
    }
    return result;
  });
  return Object.defineProperty(store, 'inFlight', { get: () => inFlight, enumerable: true }) as CountedStore;
}
