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

/** An answer in bytes-to-be: what the HTTP layer writes, adding Content-Length and Cache-Control. */
export interface Reply {
  readonly status: number;
  /** Null sends no Content-Type at all (ASMX's void GET/POST answers). */
  readonly contentType: string | null;
  readonly body: string;
  /** Raised once the operation was invoked: ASMX then sends `Cache-Control: private, max-age=0`. */
  readonly invoked: boolean;
  readonly headers?: ReadonlyArray<readonly [string, string]>;
}

/** Builds the argument record with no prototype, so no request-chosen name can reach Object's. */
export function emptyArgs(): Record<string, ArgValue> {
  return Object.create(null) as Record<string, ArgValue>;
}
