/**
 * The bindings' types, in one file that imports nothing of the bindings: what a request is to
 * dispatch (Exchange), where it goes (Route), what a protocol does with it (Binding, Read) and what
 * comes back (Outcome). Every other file of the bindings imports them from here, so no two of
 * them name each other, types included (`npm run lint`: dependency-cruiser's no-circular).
 */
import type { ArgValue, ResultValue } from '../contract/types.js';
import type { ServiceError } from '../errors/errors.js';
import type { Operation, Service } from '../operations/index.js';
import type { Reply } from '../reply/reply.js';
import type { EnvelopeLimits } from '../xml/envelope-reader.js';
import type { ResultWriter } from '../xml/result-writer.js';

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

/**
 * The request target as ASMX reads it (request-target.ts parses it): the base path, then
 * `<ServiceFile>.asmx`, matched case-insensitively (decision 2), then `/<Operation>` for HTTP GET
 * and POST, and the query.
 */
export interface RequestTarget {
  /** The service file named, lower case and without `.asmx`: the key of the route table. */
  readonly serviceKey: string;
  /** What follows `/X.asmx/`, percent-decoded; undefined for `/X.asmx` itself. */
  readonly opPath: string | undefined;
  /** The query string without its `?`, still percent-encoded. */
  readonly query: string;
}

/** What dispatch needs of an HTTP request; the HTTP layer provides it (or a test, or a replay). */
export interface Exchange {
  readonly method: string;
  /** The request target as sent: path and query, still percent-encoded. */
  readonly url: string;
  /** The same, parsed once for everyone (null: it names no service file under the base path). */
  readonly target: RequestTarget | null;
  header(name: string): string | undefined;
  /**
   * The whole body, read once: at once when it has already arrived, else once it has; throws or
   * rejects with RequestTooLargeError past the configured limit.
   */
  readBody(): Buffer | Promise<Buffer>;
  /** `scheme://host[:port]` as the client addressed the service (decision 3). */
  origin(): string;
  /** The caller is on this machine (the help page test form is offered to it by default). */
  readonly isLocal: boolean;
  /** The caller's address (behind a trusted proxy, the forwarded one): operations get it in their context. */
  readonly clientAddress: string;
  /** The client that address counts as (src/address/client-network.ts clientKey): what counters key by. */
  readonly client: string;
  /** The /48 counted beside that client (a native IPv6 client's; null for IPv4, or when the client is the /48). */
  readonly site: string | null;
  /** The `traceparent` a request made on this one's behalf carries (operations get it in their context). */
  readonly onwardTraceparent: string | undefined;
  /**
   * How long the request already waited for a dependency before dispatch (ms: the rate limit's
   * Redis), counted in a read's budget for the database (SIS_STALE_AFTER_MS); absent: none.
   */
  readonly waitedMs?: number;
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

/** What a request may cost to read, the same for every route (from the settings). */
export interface ReadLimits {
  readonly envelope: EnvelopeLimits;
  /** Fields of a query string or form body read at most (SIS_MAX_FORM_FIELDS). */
  readonly maxFormFields: number;
}

/**
 * Everything a binding looks up for one service file, computed once at start (service-routes.ts):
 * the one object a request carries through dispatch and its binding.
 */
export interface ServiceRoutes {
  readonly service: Service;
  /** The service file's name, as logs and metrics label it. */
  readonly name: string;
  readonly namespace: string;
  /** SOAPAction value (after unquoting and URL-decoding) → operation. */
  readonly byAction: ReadonlyMap<string, Operation>;
  /** Local name of the body element, in the service namespace → operation. */
  readonly byElement: ReadonlyMap<string, Operation>;
  /** Operation name in a GET/POST path (case-sensitive, as ASMX). */
  readonly byName: ReadonlyMap<string, Operation>;
  /** Lower-cased name → operation, only to word ASMX's "wrong case" error. */
  readonly byLowerName: ReadonlyMap<string, Operation>;
  readonly writers: ReadonlyMap<Operation, ResultWriter>;
  readonly limits: ReadLimits;
}

/**
 * One protocol's rules, whole: SOAP 1.1 (soap-11.ts), SOAP 1.2 (soap-12.ts), HTTP GET
 * (http-get.ts) and HTTP POST (http-post.ts). The dispatcher picks one per request from the
 * route and never asks which it holds: `read` turns the request into a call, `write` a result
 * into the reply, `fail` an error into the reply; every status and content type is decided here.
 */
export interface Binding {
  readonly name: BindingName;
  /**
   * The call the request makes, or the error to answer it with; the binding that answers may
   * differ from the one asked (a SOAP envelope settles its own version). Asked once per request,
   * with the body when the route says the binding reads one (`Route.wantsBody`), else with null.
   */
  read(ex: Exchange, routes: ServiceRoutes, body: Buffer | null): Read;
  /** The reply carrying an operation's result, written by the operation's writer. */
  write(writer: ResultWriter, value: ResultValue): Reply;
  /** The reply for an error: the request's, or the operation's. */
  fail(error: ServiceError): Reply;
}

/** A request read: the call to make, or the error to answer with (naming the operation when known); and the binding that answers. */
export type Read =
  | { readonly binding: Binding; readonly call: Call; readonly error?: undefined; readonly operation?: undefined }
  | { readonly binding: Binding; readonly error: ServiceError; readonly operation?: string | undefined };

/**
 * `call`: a binding reads the request (SOAP on POST /X.asmx, HTTP GET and POST on /X.asmx/Op);
 * `describe`: GET /X.asmx[?query], the service description and help pages; `method-not-allowed`:
 * another verb on /X.asmx; `not-a-format`: another verb, or an empty name, on /X.asmx/Op.
 */
export type RouteKind = 'call' | 'describe' | 'method-not-allowed' | 'not-a-format';

/** Where a request goes, found from its method, target and headers before its body is read (route.ts). */
export interface Route {
  readonly service: ServiceRoutes;
  readonly kind: RouteKind;
  /** The binding asked (`call` only): for SOAP, ASMX's first guess (soap.ts); the envelope may settle the other version. */
  readonly binding: Binding | null;
  /** The operation an HTTP GET or POST path names, when the file has it; SOAP names its own in the body. */
  readonly operation: Operation | null;
  /** The binding reads the body (SOAP; HTTP POST of a known operation): dispatch reads it first, once. */
  readonly wantsBody: boolean;
}
