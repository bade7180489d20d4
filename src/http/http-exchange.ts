import type { IncomingMessage } from 'node:http';
import { performance } from 'node:perf_hooks';
import { clientKey, siteNetwork } from '../address/client-network.js';
import { parseTarget } from '../bindings/request-target.js';
import type { Exchange } from '../bindings/types.js';
import type { RequestTarget } from '../bindings/types.js';
import type { Config } from '../config/config.js';
import { formatTraceparent, parseTraceparent, withTraceparent } from '../observe/trace-context.js';
import type { RequestSpan, TraceParent } from '../observe/trace-context.js';
import { collectBody, readBody } from './body.js';
import { clientAddress, isLocalAddress, originForm, requestOrigin } from './origin.js';

/**
 * A node:http request as the dispatcher sees it. One object per request with its methods on the
 * prototype: the hot path allocates no closures, and what few requests need (the origin, whether
 * the caller is local) is worked out only when asked.
 */
export class HttpExchange implements Exchange {
  readonly method: string;
  /** The request target in origin form (`/X.asmx?WSDL`), however the client wrote it. */
  readonly url: string;
  /** performance.now() at arrival, for the duration metric and log. */
  readonly started = performance.now();
  /** The body was refused part-way (too large): the connection must close after the answer. */
  bodyRefused = false;
  /** This request's span, while tracing (OTEL_EXPORTER_OTLP_ENDPOINT); null otherwise. */
  span: RequestSpan | null = null;
  /** How long the gate waited for the rate limit's Redis (ms): part of a read's budget (SIS_STALE_AFTER_MS). */
  waitedMs = 0;

  constructor(
    private readonly req: IncomingMessage,
    private readonly config: Config,
    readonly requestId: string,
  ) {
    this.method = req.method ?? 'GET';
    this.url = originForm(req.url ?? '/');
  }

  #target: RequestTarget | null | undefined;

  /** Parsed on first use: the ops endpoints never need it. */
  get target(): RequestTarget | null {
    if (this.#target === undefined) this.#target = parseTarget(this.url, this.config.basePath);
    return this.#target;
  }

  header(name: string): string | undefined {
    const v = this.req.headers[name];
    return Array.isArray(v) ? v.join(', ') : v;
  }

  #traceparent: TraceParent | null | undefined;

  /** The caller's W3C trace context, read on first use (null: none, or not valid). */
  get traceparent(): TraceParent | null {
    if (this.#traceparent === undefined) this.#traceparent = parseTraceparent(this.header('traceparent'));
    return this.#traceparent;
  }

  /**
   * What a request made on this one's behalf (AuthCode's SMS delivery, to a third party) carries
   * as its traceparent: our span's while tracing (the delivery is its child), else none: a
   * caller's own header is not handed to the gateway. Only AuthCode asks.
   */
  get onwardTraceparent(): string | undefined {
    return this.span?.traceparent;
  }

  /**
   * The headers as received, for the legacy service: while tracing, with our span's traceparent;
   * else with the caller's only if it is valid W3C trace context, in its 55-character version 00
   * form (an invalid one, of any size, is dropped with its tracestate: the spec starts afresh).
   */
  get onwardHeaders(): readonly string[] {
    const raw = this.req.rawHeaders;
    if (this.span !== null) return withTraceparent(raw, this.span.traceparent);
    const header = this.req.headers['traceparent'];
    if (header === undefined) return raw;
    const parent = this.traceparent;
    const onward = parent === null ? null : formatTraceparent(parent.traceId, parent.parentId, parent.flags);
    return onward === header ? raw : withTraceparent(raw, onward);
  }

  /** The trace this request belongs to, for its log line: ours while tracing, else the caller's, else none. */
  get traceId(): string | undefined {
    return this.span !== null ? this.span.traceId : this.traceparent?.traceId;
  }

  #body: Buffer | Promise<Buffer> | undefined;

  /** The request says it carries a body (chunked, or a length other than 0). */
  get hasBody(): boolean {
    const length = this.req.headers['content-length'];
    return this.req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
  }

  /** Read once: a second reader (the shadow's copy for the legacy service) gets the same bytes. */
  readBody(): Buffer | Promise<Buffer> {
    return (this.#body ??= readBody(this.req, this.config.maxBodyBytes, this));
  }

  /**
   * Reads a body of declared length within the limit before dispatch, then calls `then`: the
   * dispatcher then finds it here and, when nothing else waits (SQLite), answers in that same
   * turn. False, and nothing read, for no body, a chunked one or one over the limit: those are
   * read (or refused) when a binding asks, as before.
   */
  collectBody(then: () => void): boolean {
    const declared = this.req.headers['content-length'];
    if (declared === undefined || this.req.headers['transfer-encoding'] !== undefined) return false;
    const length = Number(declared);
    if (!(length > 0 && length <= this.config.maxBodyBytes)) return false;
    collectBody(this.req, this.config.maxBodyBytes, this, (err, body) => {
      if (err === null) this.#body = body!;
      else {
        const refused = Promise.reject(err);
        refused.catch(() => undefined);
        this.#body = refused;
      }
      then();
    });
    return true;
  }

  /** The headers as received, names in their case, as flat name/value pairs (to forward them). */
  get rawHeaders(): readonly string[] {
    return this.req.rawHeaders;
  }

  /** The peer's address (X-Forwarded-For's last hop when the request is forwarded). */
  get peerAddress(): string | undefined {
    return this.req.socket.remoteAddress;
  }

  origin(): string {
    return requestOrigin(this.req, this.config);
  }

  /** Behind a trusted proxy the caller is the one X-Forwarded-For names, not the proxy. */
  get clientAddress(): string {
    return clientAddress(this.req, this.config);
  }

  #client: string | undefined;

  /** The client the caller counts as (clientKey): what rate limits, the access log and the SMS guard count by. */
  get client(): string {
    if (this.#client === undefined)
      this.#client = clientKey(this.clientAddress, this.config.clientIpv6Prefix, this.config.clientNat64Prefixes);
    return this.#client;
  }

  #site: string | null | undefined;

  /**
   * The /48 counted beside the client (siteNetwork): a native IPv6 client's; null for an IPv4
   * client (embedded ones too), and when the client already is its /48 (SIS_CLIENT_IPV6_PREFIX=48).
   */
  get site(): string | null {
    if (this.#site === undefined)
      this.#site =
        this.config.clientIpv6Prefix === 48 ? null : siteNetwork(this.clientAddress, this.config.clientNat64Prefixes);
    return this.#site;
  }

  get isLocal(): boolean {
    return isLocalAddress(this.clientAddress);
  }
}
