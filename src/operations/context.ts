import type { Store } from '../store/store.js';

/** What an operation may use: the store, and nothing of the wire. */
export interface OperationContext {
  readonly store: Store;
  /** The time of the call, injectable for tests. */
  readonly now: () => Date;
}
