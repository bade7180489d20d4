import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { randomBytes } from 'node:crypto';
import type { Config } from '../config/config.js';
import type { Dispatcher, Outcome } from '../bindings/dispatch.js';
import { RequestTooLargeError } from '../errors/errors.js';
import type { Gate, Refusal } from '../ops/gate.js';
import type { RequestMetrics } from '../ops/metrics.js';
import { opsPath } from '../ops/ops-endpoints.js';
import type { OpsEndpoints } from '../ops/ops-endpoints.js';
import { redactUrl } from '../ops/redact.js';
import { readBody } from './body.js';
import { writeReply } from './write-reply.js';
import type { Logger } from './logger.js';
import { clientAddress, isLocalAddress, requestOrigin } from './origin.js';

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
 * Reply with ASMX's transport rules: Content-Length always (never chunked), Cache-Control
 * `private` or `private, max-age=0`, and no header that advertises the stack. node:http is used
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

  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const started = process.hrtime.bigint();
    const requestId = `${bootId}-${(++counter).toString(36)}`;
    const url = req.url ?? '/';
    const header = (name: string): string | undefined => {
      const v = req.headers[name];
      return Array.isArray(v) ? v.join(', ') : v;
    };
    if (ops !== undefined) {
      const path = opsPath(url);
      if (path !== null) {
        if (state.draining) res.setHeader('Connection', 'close');
        if (workerPid !== null) res.setHeader('X-Sis-Worker-Pid', workerPid);
        void ops.answer(path, req, res, requestId);
        return;
      }
    }
    if (metrics !== undefined) metrics.inFlight++;

    const finish = (outcome: Outcome, bodyRefused: boolean): void => {
      writeReply(res, outcome.reply, { requestId, workerPid, closeAfter: bodyRefused || state.draining });
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const status = outcome.reply.status;
      if (metrics !== undefined) {
        metrics.inFlight--;
        metrics.observe(outcome.service, outcome.operation, outcome.binding, status, seconds);
      }
      const entry = {
        requestId,
        method: req.method,
        service: outcome.service,
        operation: outcome.operation,
        binding: outcome.binding,
        status,
        ms: Math.round(seconds * 1e6) / 1000,
        // Unrouted requests are the ones an operator needs the path of; never with query values.
        path: outcome.service === undefined ? redactUrl(url) : undefined,
      };
      if (outcome.cause !== undefined) log.error({ ...entry, err: outcome.cause }, 'operation failed');
      else log.info(entry, 'request');
    };

    const serve = (): void => {
      let bodyRefused = false;
      const exchange = {
        method: req.method ?? 'GET',
        url,
        header,
        readBody: async (): Promise<Buffer> => {
          try {
            return await readBody(req, config.maxBodyBytes);
          } catch (err) {
            if (err instanceof RequestTooLargeError) bodyRefused = true;
            throw err;
          }
        },
        origin: () => requestOrigin(req, config),
        // Behind a trusted proxy the caller is the one X-Forwarded-For names, not the proxy.
        isLocal: isLocalAddress(clientAddress(req, config)),
      };
      dispatcher
        .dispatch(exchange)
        .catch((err: unknown): Outcome => {
          log.error({ err, requestId }, 'unexpected failure while answering');
          return {
            reply: { status: 500, contentType: 'text/plain; charset=utf-8', body: 'An internal error occurred.\r\n', invoked: false },
          };
        })
        .then((outcome) => finish(outcome, bodyRefused));
    };

    if (gate === null) return serve();
    const refuse = (refusal: Refusal): void => {
      const service = gate.serviceName(url);
      // The body was not read: the connection cannot carry another request after this answer.
      finish({ ...(service === null ? {} : { service }), reply: refusalReply(refusal) }, hasBody(req));
    };
    const verdict = gate.check(req, header);
    if (verdict === null) return serve();
    if (!(verdict instanceof Promise)) return refuse(verdict);
    verdict.then(
      (refusal) => (refusal === null ? serve() : refuse(refusal)),
      (err: unknown) => {
        log.error({ err, requestId }, 'access check failed');
        serve();
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

function refusalReply(refusal: Refusal): Outcome['reply'] {
  return { status: refusal.status, contentType: 'text/plain; charset=utf-8', body: refusal.body, invoked: false, headers: refusal.headers };
}

function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}
