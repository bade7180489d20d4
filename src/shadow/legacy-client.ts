/**
 * The legacy service's side of a comparison: the client's request sent on with its method, path,
 * headers (Host included, so the legacy's WSDL and help pages name the address the client used)
 * and body, plus X-Forwarded-For; the answer read whole, within a time-out and a size cap, so a
 * legacy service that hangs, refuses or floods costs a bounded wait and bounded memory.
 *
 * undici's Pool, not node:http's client: measured against a fixed-bytes server, node:http costs
 * two to three times undici's CPU a request (bench/RESULTS.md).
 * The whole exchange (queue, connection, answer) has one deadline: a timer that aborts it through
 * an EventEmitter, which undici takes as a signal (an AbortController a request cost more).
 */
import { EventEmitter } from 'node:events';
import { performance } from 'node:perf_hooks';
import type { Dispatcher } from 'undici';
import { Client, Pool } from 'undici';

/** A request as the legacy service gets it. */
export interface ForwardRequest {
  readonly method: string;
  /** Below the base path: appended to the legacy base URL. */
  readonly relativeUrl: string;
  /** As received (name, value, name, value…). */
  readonly rawHeaders: readonly string[];
  readonly body: Buffer | null;
  /** The client's address, added to X-Forwarded-For. */
  readonly clientAddress: string | undefined;
  /** A write (AuthCode): never sent twice, so a reused connection reset is not retried. */
  readonly write: boolean;
  /**
   * A copy (compare mode, a recheck): sent with `X-Shadow-Copy: 1`, so the legacy service's own
   * logs and counters can tell copies from its clients' requests.
   */
  readonly copy: boolean;
  /** Our own probe (`probe()`), said in `X-Shadow-Probe: 1`; a client's header of that name is dropped. */
  readonly probe?: boolean;
}

export interface LegacyAnswer {
  readonly status: number;
  /** Lower-case names; repeated headers joined with ", ". */
  readonly headers: ReadonlyMap<string, string>;
  readonly body: Buffer;
  readonly seconds: number;
}

export type LegacyFailure = 'timeout' | 'refused' | 'not-http' | 'too-large' | 'error';

export type LegacyResult =
  | { readonly ok: true; readonly answer: LegacyAnswer }
  | {
      readonly ok: false;
      readonly failure: LegacyFailure;
      readonly message: string;
      /** The request may have reached the legacy service (a connection was made): a write must not be redone. */
      readonly reached: boolean;
      readonly seconds: number;
    };

export interface LegacyClientOptions {
  readonly timeoutMs: number;
  readonly maxAnswerBytes: number;
  /** Connections kept open to the legacy service. */
  readonly maxSockets: number;
}

/** Hop-by-hop headers belong to one connection; Content-Length is recomputed from the body. */
const NOT_FORWARDED = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'content-length',
  'expect',
]);

const FIRST_PAUSE_MS = 1000;
const MAX_PAUSE_MS = 30_000;

/** Errors before a connection was made: the request cannot have reached the legacy service. */
const NOT_CONNECTED = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EHOSTUNREACH', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT']);

export class LegacyClient {
  readonly #base: URL;
  readonly #pool: Pool;
  /** While a legacy that refused connections is left alone (performance.now() ms), and the next pause. */
  #refusingUntil = 0;
  #pauseMs = FIRST_PAUSE_MS;

  constructor(
    baseUrl: string,
    private readonly options: LegacyClientOptions,
  ) {
    this.#base = new URL(baseUrl);
    this.#pool = new Pool(this.#base.origin, {
      connections: options.maxSockets,
      // One request at a time a connection: a legacy that hangs on one holds up no other.
      pipelining: 1,
      // The whole exchange's deadline is the abort timer below; this names a host that never answers.
      connectTimeout: options.timeoutMs,
    });
  }

  /**
   * Never rejects: a failure is a result (legacy-failed). A legacy that refused a connection is
   * not tried again for a pause (1 s, doubling to 30 s while it keeps refusing): meanwhile each
   * request fails at once, as refused, costing neither side a connection attempt.
   */
  async send(request: ForwardRequest): Promise<LegacyResult> {
    if (performance.now() < this.#refusingUntil)
      return failure('refused', 'the legacy service refused connections a moment ago; tried again soon', 0, false);
    const result = await this.#attempt(this.#pool, request, true);
    if (!result.ok && result.failure === 'refused' && !result.reached) {
      this.#refusingUntil = performance.now() + this.#pauseMs;
      this.#pauseMs = Math.min(this.#pauseMs * 2, MAX_PAUSE_MS);
    } else {
      this.#pauseMs = FIRST_PAUSE_MS;
    }
    return result;
  }

  /**
   * Our own question to the legacy service, which no client chooses: `GET relativeUrl` (a cheap
   * page, such as a service file's `?disco`) on a connection of its own, so it never waits behind
   * the clients' requests in the pool, within the same deadline. True when any HTTP answer came
   * (whatever its status: the legacy is answering); false when none did in time, or none could.
   */
  async probe(relativeUrl: string): Promise<boolean> {
    const client = new Client(this.#base.origin, { connectTimeout: this.options.timeoutMs, pipelining: 1 });
    const request: ForwardRequest = {
      method: 'GET',
      relativeUrl,
      rawHeaders: [],
      body: null,
      clientAddress: undefined,
      write: false,
      copy: false,
      probe: true,
    };
    try {
      return (await this.#attempt(client, request, false)).ok;
    } finally {
      client.destroy().catch(() => undefined);
    }
  }

  /** How long from now the legacy service is left alone for refusing connections (0: it is not). */
  pausedForMs(): number {
    return Math.max(0, this.#refusingUntil - performance.now());
  }

  close(): void {
    this.#pool.destroy().catch(() => undefined);
  }

  /**
   * One exchange, settled by its deadline whatever undici does: at the time-out the request is
   * aborted and the result is `timeout` at once, even if undici never settles it (a request it
   * refused can leave a Pool's connection wedged, and requests queued behind it would wait for
   * ever: each would keep its comparison's in-flight place).
   */
  async #attempt(via: Dispatcher, request: ForwardRequest, mayRetry: boolean): Promise<LegacyResult> {
    const started = performance.now();
    const seconds = (): number => (performance.now() - started) / 1000;
    // Appended, never resolved: no request path can name another host (the pool has one origin).
    const url = new URL(this.#base.href + request.relativeUrl.replace(/^\/+/, ''));
    const signal = new EventEmitter();
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<LegacyResult>((resolve) => {
      timer = setTimeout(() => {
        signal.emit('abort');
        resolve(failure('timeout', `no whole answer within ${this.options.timeoutMs} ms`, seconds()));
      }, this.options.timeoutMs);
    });
    const exchange = (async (): Promise<LegacyResult> => {
      const response = await via.request({
        path: url.pathname + url.search,
        method: request.method as Dispatcher.HttpMethod,
        headers: forwardedHeaders(request),
        body: request.body,
        signal,
      });
      return this.#read(response, seconds);
    })();
    try {
      return await Promise.race([exchange, deadline]);
    } catch (err) {
      const error = err as NodeJS.ErrnoException;
      // A kept-alive connection the legacy closed meanwhile: once more on a new one (never a write).
      if (mayRetry && !request.write && error.code === 'UND_ERR_SOCKET') {
        clearTimeout(timer);
        return this.#attempt(via, request, false);
      }
      return failed(error, seconds(), this.options.timeoutMs);
    } finally {
      clearTimeout(timer);
      // Settled by the deadline: whatever undici settles later is dropped.
      exchange.catch(() => undefined);
    }
  }

  /** The body read whole, within the size cap (the deadline aborts it as it does the request). */
  #read(response: Dispatcher.ResponseData, seconds: () => number): Promise<LegacyResult> {
    const max = this.options.maxAnswerBytes;
    const { body } = response;
    const declared = Number(response.headers['content-length'] ?? 0);
    if (declared > max) {
      body.destroy();
      return Promise.resolve(failure('too-large', `an answer of ${declared} bytes, over ${max}`, seconds()));
    }
    return new Promise<LegacyResult>((resolve, reject) => {
      const chunks: Buffer[] = [];
      let size = 0;
      body.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size <= max) return void chunks.push(chunk);
        body.removeAllListeners('data');
        body.destroy();
        resolve(failure('too-large', `an answer of more than ${max} bytes`, seconds()));
      });
      body.on('error', reject);
      body.on('end', () => {
        const headers = new Map<string, string>();
        for (const [name, value] of Object.entries(response.headers)) {
          if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
        }
        const answer = { status: response.statusCode, headers, body: Buffer.concat(chunks, size), seconds: seconds() };
        resolve({ ok: true, answer });
      });
    });
  }
}

/** Name, value, name, value…: undici takes repeated headers as they come. */
function forwardedHeaders(request: ForwardRequest): string[] {
  const headers: string[] = [];
  const raw = request.rawHeaders;
  let forwardedFor: string | undefined;
  let host = false;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!;
    const lower = name.toLowerCase();
    // Our own headers are ours: a copy says so afresh, a tester's routing is not the legacy's business.
    if (
      NOT_FORWARDED.has(lower) ||
      lower === 'x-shadow-copy' ||
      lower === 'x-shadow-route' ||
      lower === 'x-shadow-probe'
    )
      continue;
    // One Host: undici refuses a second one, and a refused request can wedge its connection.
    if (lower === 'host') {
      if (host) continue;
      host = true;
    }
    if (lower === 'x-forwarded-for') {
      forwardedFor = forwardedFor === undefined ? raw[i + 1]! : `${forwardedFor}, ${raw[i + 1]!}`;
      continue;
    }
    headers.push(name, raw[i + 1]!);
  }
  const client = request.clientAddress;
  if (client !== undefined) forwardedFor = forwardedFor === undefined ? client : `${forwardedFor}, ${client}`;
  if (forwardedFor !== undefined) headers.push('X-Forwarded-For', forwardedFor);
  if (request.body !== null) headers.push('Content-Length', String(request.body.length));
  if (request.copy) headers.push('X-Shadow-Copy', '1');
  if (request.probe === true) headers.push('X-Shadow-Probe', '1');
  return headers;
}

function failure(kind: LegacyFailure, message: string, seconds: number, reached = true): LegacyResult {
  return { ok: false, failure: kind, message, reached, seconds };
}

function failed(err: NodeJS.ErrnoException, seconds: number, timeoutMs: number): LegacyResult {
  const code = err.code ?? '';
  const message = err.message;
  if (code === 'UND_ERR_ABORTED') return failure('timeout', `no whole answer within ${timeoutMs} ms`, seconds);
  if (NOT_CONNECTED.has(code)) return failure('refused', message, seconds, false);
  if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET') return failure('refused', message, seconds);
  if (code.startsWith('HPE_')) return failure('not-http', message, seconds);
  return failure('error', message, seconds);
}
