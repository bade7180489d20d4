import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Config } from '../config/config.js';
import type { Dispatcher, Outcome } from '../bindings/dispatch.js';
import type { Gate, Refusal } from '../ops/gate.js';
import type { RequestMetrics } from '../ops/metrics.js';
import { opsPath } from '../ops/ops-endpoints.js';
import type { OpsEndpoints } from '../ops/ops-endpoints.js';
import { redactUrl } from '../ops/redact.js';
import { databaseCondition } from '../store/db-errors.js';
import { HttpExchange } from './http-exchange.js';
import { isStreamed } from '../xml/chunked-text.js';
import { writeReply } from './write-reply.js';
import type { ReplyEnd } from './write-reply.js';
import type { Logger } from './logger.js';

/** What the server shares with the shutdown: once draining, every answer closes its connection. */
export interface ServerState {
  draining: boolean;
}

/** The production parts around dispatch; each is optional so a bare server stays possible. */
export interface ServerHooks {
  readonly state?: ServerState;
  readonly metrics?: RequestMetrics;
  /** Access rules and rate limits, run before dispatch; null or disabled = skipped. */
  readonly gate?: Gate | null;
  readonly ops?: OpsEndpoints;
}

/**
 * The HTTP layer: turns a node:http request into an Exchange for the dispatcher and writes its
 * Reply with ASMX's transport rules: Content-Length (chunked only for a list longer than a page,
 * decision 17), Cache-Control `private` or `private, max-age=0`, and no header that advertises
 * the stack. node:http is used
 * bare because the answer bytes are ours to the last header, and the benchmark shows its cost.
 */
export function createHttpServer(config: Config, dispatcher: Dispatcher, log: Logger, hooks: ServerHooks = {}): Server {
  const timeouts = {
    requestTimeout: config.requestTimeoutMs,
    // Node checks time-outs on this interval (30 s by default): often enough to cut slow clients.
    connectionsCheckingInterval: Math.min(1000, config.requestTimeoutMs),
    headersTimeout: config.headersTimeoutMs,
    keepAliveTimeout: config.keepAliveTimeoutMs,
  };
  const server: Server =
    config.tls === null ? createServer(timeouts) : createHttpsServer({ ...timeouts, cert: config.tls.cert, key: config.tls.key });
  const bootId = randomBytes(4).toString('hex');
  const state = hooks.state ?? { draining: false };
  const { metrics, ops } = hooks;
  const gate = hooks.gate?.enabled === true ? hooks.gate : null;
  const workerPid = config.debugHeaders ? String(process.pid) : null;
  let counter = 0;

  /** Writes the outcome; once it is sent, counts and logs it: the one place every answered request passes. */
  const finish = (ex: HttpExchange, res: ServerResponse, outcome: Outcome, closeAfter: boolean): void => {
    const extras = { requestId: ex.requestId, workerPid, closeAfter: closeAfter || state.draining };
    if (isStreamed(outcome.reply.body)) {
      // A streamed list ends later, and perhaps cut short: its time and fate are known only then.
      writeReply(res, outcome.reply, { ...extras, onEnd: (end) => done(ex, outcome, end) });
      return;
    }
    writeReply(res, outcome.reply, extras);
    done(ex, outcome, SENT);
  };

  const done = (ex: HttpExchange, outcome: Outcome, end: ReplyEnd): void => {
    const seconds = (performance.now() - ex.started) / 1000;
    if (metrics !== undefined) {
      metrics.inFlight--;
      metrics.observe(outcome.service, outcome.operation, outcome.binding, outcome.reply.status, seconds);
    }
    if (outcome.cause !== undefined) {
      // A database that is down, full or read-only is logged once, as a state change (ops/database-watch.ts);
      // each request it fails is an ordinary request line.
      const database = databaseCondition(outcome.cause);
      if (database === null) log.error({ ...logEntry(ex, outcome, seconds), err: outcome.cause }, 'operation failed');
      else if (log.isLevelEnabled('info')) log.info({ ...logEntry(ex, outcome, seconds), database }, 'request');
    } else if (end.kind === 'failed') {
      log.error({ ...logEntry(ex, outcome, seconds), err: end.error }, 'streamed answer failed midway; connection cut');
    } else if (end.kind !== 'sent') {
      log.warn({ ...logEntry(ex, outcome, seconds), end: end.kind }, 'streamed answer not taken to its end; connection cut');
    } else if (log.isLevelEnabled('info')) log.info(logEntry(ex, outcome, seconds), 'request');
  };

  const serve = (ex: HttpExchange, res: ServerResponse): void => {
    dispatcher.dispatch(ex).then(
      (outcome) => finish(ex, res, outcome, ex.bodyRefused),
      (err: unknown) => {
        log.error({ err, requestId: ex.requestId }, 'unexpected failure while answering');
        finish(ex, res, { reply: INTERNAL_ERROR }, ex.bodyRefused);
      },
    );
  };

  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const ex = new HttpExchange(req, config, `${bootId}-${(++counter).toString(36)}`);
    if (ops !== undefined) {
      const path = opsPath(ex.url);
      if (path !== null) {
        if (state.draining) res.setHeader('Connection', 'close');
        if (workerPid !== null) res.setHeader('X-Sis-Worker-Pid', workerPid);
        void ops.answer(path, req, res, ex.requestId);
        return;
      }
    }
    if (metrics !== undefined) metrics.inFlight++;
    if (gate === null) return serve(ex, res);

    const refuse = (refusal: Refusal): void => {
      const service = gate.serviceName(ex.url);
      // The body was not read: the connection cannot carry another request after this answer.
      finish(ex, res, { ...(service === null ? {} : { service }), reply: refusalReply(refusal) }, hasBody(req));
    };
    const verdict = gate.check(req, (name) => ex.header(name));
    if (verdict === null) return serve(ex, res);
    if (!(verdict instanceof Promise)) return refuse(verdict);
    verdict.then(
      (refusal) => (refusal === null ? serve(ex, res) : refuse(refusal)),
      (err: unknown) => {
        log.error({ err, requestId: ex.requestId }, 'access check failed');
        serve(ex, res);
      },
    );
  });
  server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
    // Malformed requests, oversized headers and time-outs: answer plainly when we still can.
    if (!socket.writable) return socket.destroy();
    const status = err.code === 'HPE_HEADER_OVERFLOW' ? 431 : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
    const text = status === 431 ? 'Request Header Fields Too Large' : status === 408 ? 'Request Timeout' : 'Bad Request';
    socket.end(`HTTP/1.1 ${status} ${text}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`);
    // A client that never reads would keep the half-closed socket: drop it shortly after.
    setTimeout(() => socket.destroy(), 1000).unref();
  });
  return server;
}

const SENT: ReplyEnd = { kind: 'sent' };

const INTERNAL_ERROR: Outcome['reply'] = {
  status: 500,
  contentType: 'text/plain; charset=utf-8',
  body: 'An internal error occurred.\r\n',
  invoked: false,
};

/** One JSON line per request; unrouted requests carry their path (never query values), as an operator needs it. */
function logEntry(ex: HttpExchange, outcome: Outcome, seconds: number): Record<string, unknown> {
  return {
    requestId: ex.requestId,
    method: ex.method,
    service: outcome.service,
    operation: outcome.operation,
    binding: outcome.binding,
    status: outcome.reply.status,
    ms: Math.round(seconds * 1e6) / 1000,
    path: outcome.service === undefined ? redactUrl(ex.url) : undefined,
  };
}

function refusalReply(refusal: Refusal): Outcome['reply'] {
  return { status: refusal.status, contentType: 'text/plain; charset=utf-8', body: refusal.body, invoked: false, headers: refusal.headers };
}

function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}
