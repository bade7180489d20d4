import type { ArgValue } from '../contract/types.js';
import type { Operation } from '../operations/index.js';

/** The binding names, as logs and metrics label them. */
export type BindingName = 'soap11' | 'soap12' | 'httpget' | 'httppost';

/** A request turned into a call: which operation, with which typed arguments. */
export interface Call {
  readonly op: Operation;
  /** By parameter name; built with a null prototype and only the operation's own names. */
  readonly args: Readonly<Record<string, ArgValue>>;
}

/** Builds the argument record with no prototype, so no request-chosen name can reach Object's. */
export function emptyArgs(): Record<string, ArgValue> {
  return Object.create(null) as Record<string, ArgValue>;
}

/**
 * Why a request is refused before dispatch (access rules and rate limits decide that it is;
 * replies.ts decides how it is answered: 403, 401 with the realm's challenge, 429).
 */
export type Refusal =
  | { readonly reason: 'address' }
  | { readonly reason: 'key'; readonly realm: string }
  | { readonly reason: 'rate'; readonly retryAfterMs: number };
