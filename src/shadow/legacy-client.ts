/**
 * The legacy service's side of a comparison: the client's request sent on with its method, path,
 * headers (Host included, so the legacy's WSDL and help pages name the address the client used)
 * and body, plus X-Forwarded-For; the answer read whole, within a time-out and a size cap, so a
 * legacy service that hangs, refuses or floods costs a bounded wait and bounded memory.
 */
import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import type { IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { performance } from 'node:perf_hooks';

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

export class LegacyClient {
  readonly #base: URL;
  readonly #agent: HttpAgent;
  readonly #send: typeof httpRequest;

  constructor(
    baseUrl: string,
    private readonly options: LegacyClientOptions,
  ) {
    this.#base = new URL(baseUrl);
    const https = this.#base.protocol === 'https:';
    const agentOptions = { keepAlive: true, maxSockets: options.maxSockets, timeout: options.timeoutMs };
    this.#agent = https ? new HttpsAgent(agentOptions) : new HttpAgent(agentOptions);
    this.#send = https ? httpsRequest : httpRequest;
  }

  /** Never rejects: a failure is a result (legacy-failed). */
  send(request: ForwardRequest): Promise<LegacyResult> {
    return this.#attempt(request, true).catch((err: unknown) => ({
      ok: false,
      failure: 'error',
      message: err instanceof Error ? err.message : String(err),
      reached: false,
      seconds: 0,
    }));
  }

  close(): void {
    this.#agent.destroy();
  }

  #attempt(request: ForwardRequest, mayRetry: boolean): Promise<LegacyResult> {
    const started = performance.now();
    const seconds = (): number => (performance.now() - started) / 1000;
    return new Promise<LegacyResult>((resolve) => {
      let settled = false;
      let reached = false;
      // Appended, never resolved: no request path can name another host.
      const url = new URL(this.#base.href + request.relativeUrl.replace(/^\/+/, ''));
      const req = this.#send(url, { method: request.method, agent: this.#agent, headers: forwardedHeaders(request) });
      const fail = (failure: LegacyFailure, message: string): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        req.destroy();
        resolve({ ok: false, failure, message, reached, seconds: seconds() });
      };
      const timer = setTimeout(
        () => fail('timeout', `no whole answer within ${this.options.timeoutMs} ms`),
        this.options.timeoutMs,
      );
      req.on('socket', (socket) => {
        if (!socket.connecting) reached = true;
        else socket.once('connect', () => (reached = true));
      });
      req.on('error', (err: NodeJS.ErrnoException) => {
        if (settled) return;
        // A kept-alive connection the legacy closed meanwhile: once more on a new one (never a write).
        if (mayRetry && req.reusedSocket && err.code === 'ECONNRESET' && !request.write) {
          settled = true;
          clearTimeout(timer);
          resolve(this.#attempt(request, false));
          return;
        }
        fail(failureOf(err), err.message);
      });
      req.on('response', (res: IncomingMessage) =>
        this.#read(res, fail, (answer) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          resolve({ ok: true, answer: { ...answer, seconds: seconds() } });
        }),
      );
      req.end(request.body ?? undefined);
    });
  }

  #read(
    res: IncomingMessage,
    fail: (failure: LegacyFailure, message: string) => void,
    done: (answer: Omit<LegacyAnswer, 'seconds'>) => void,
  ): void {
    const max = this.options.maxAnswerBytes;
    const declared = Number(res.headers['content-length'] ?? 0);
    if (declared > max) return fail('too-large', `an answer of ${declared} bytes, over ${max}`);
    const chunks: Buffer[] = [];
    let size = 0;
    res.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > max) return fail('too-large', `an answer of more than ${max} bytes`);
      chunks.push(chunk);
    });
    res.on('error', (err: NodeJS.ErrnoException) => fail(failureOf(err), err.message));
    res.on('end', () => {
      const headers = new Map<string, string>();
      for (const [name, value] of Object.entries(res.headers)) {
        if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
      }
      done({ status: res.statusCode ?? 0, headers, body: Buffer.concat(chunks, size) });
    });
  }
}

function forwardedHeaders(request: ForwardRequest): OutgoingHttpHeaders {
  const headers: Record<string, string | string[]> = Object.create(null) as Record<string, string | string[]>;
  const raw = request.rawHeaders;
  let forwardedFor: string | undefined;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!;
    const lower = name.toLowerCase();
    if (NOT_FORWARDED.has(lower)) continue;
    if (lower === 'x-forwarded-for') {
      forwardedFor = forwardedFor === undefined ? raw[i + 1]! : `${forwardedFor}, ${raw[i + 1]!}`;
      continue;
    }
    const previous = headers[name];
    headers[name] = previous === undefined ? raw[i + 1]! : [...[previous].flat(), raw[i + 1]!];
  }
  const client = request.clientAddress;
  if (client !== undefined)
    headers['X-Forwarded-For'] = forwardedFor === undefined ? client : `${forwardedFor}, ${client}`;
  else if (forwardedFor !== undefined) headers['X-Forwarded-For'] = forwardedFor;
  if (request.body !== null) headers['Content-Length'] = String(request.body.length);
  return headers;
}

function failureOf(err: NodeJS.ErrnoException): LegacyFailure {
  const code = err.code ?? '';
  if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EHOSTUNREACH' || code === 'ECONNRESET')
    return 'refused';
  if (code.startsWith('HPE_')) return 'not-http';
  return 'error';
}
