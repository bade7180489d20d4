import type { ArgValue } from '../contract/types.js';
import type { Operation } from '../operations/index.js';
import type { Body } from '../xml/chunked-text.js';

/** The binding names, as logs and metrics label them. */
export type BindingName = 'soap11' | 'soap12' | 'httpget' | 'httppost';

/** A request turned into a call: which operation, with which typed arguments. */
export interface Call {
  readonly op: Operation;
  /** By parameter name; built with a null prototype and only the operation's own names. */
  readonly args: Readonly<Record<string, ArgValue>>;
}

/** An answer in bytes-to-be: what the HTTP layer writes, adding Content-Length and Cache-Control. */
export interface Reply {
  readonly status: number;
  /** Null sends no Content-Type at all (ASMX's void GET/POST answers). */
  readonly contentType: string | null;
  /**
   * One string, or UTF-8 pieces for a large answer (both sent under one Content-Length), or a
   * stream for a list longer than a page (sent chunked as it is read; decision 17).
   */
  readonly body: Body;
  /** Raised once the operation was invoked: ASMX then sends `Cache-Control: private, max-age=0`. */
  readonly invoked: boolean;
  readonly headers?: ReadonlyArray<readonly [string, string]>;
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
