import type { Reply } from '../reply/reply.js';
import type { RequestTarget } from './request-target.js';
import type { Route } from './route.js';
import type { BindingName } from './types.js';

/** What dispatch needs of an HTTP request; the HTTP layer provides it (or a test, or a replay). */
export interface Exchange {
  readonly method: string;
  /** The request target as sent: path and query, still percent-encoded. */
  readonly url: string;
  /** The same, parsed once for everyone (null: it names no service file under the base path). */
  readonly target: RequestTarget | null;
  /** Where it goes (route.ts), kept by routeOf on first use: undefined until then. */
  route?: Route | null | undefined;
  header(name: string): string | undefined;
  /**
   * The whole body: at once when it has already arrived, else once it has; throws or rejects with
   * RequestTooLargeError past the configured limit.
   */
  readBody(): Buffer | Promise<Buffer>;
  /** `scheme://host[:port]` as the client addressed the service (decision 3). */
  origin(): string;
  /** The caller is on this machine (the help page test form is offered to it by default). */
  readonly isLocal: boolean;
  /** The caller's address (behind a trusted proxy, the forwarded one): operations get it in their context. */
  readonly clientAddress: string;
  /** The `traceparent` a request made on this one's behalf carries (operations get it in their context). */
  readonly onwardTraceparent: string | undefined;
}

/** The reply, and what logs and metrics say about the request. */
export interface Outcome {
  readonly reply: Reply;
  readonly service?: string | undefined;
  readonly operation?: string | undefined;
  readonly binding?: BindingName | undefined;
  /** The failure behind an operation error, for the log only. */
  readonly cause?: unknown;
}
