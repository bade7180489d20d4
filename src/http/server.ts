import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { randomBytes } from 'node:crypto';
import type { Config } from '../config/config.js';
import type { Dispatcher, Outcome } from '../bindings/dispatch.js';
import { RequestTooLargeError } from '../errors/errors.js';
import { readBody } from './body.js';
import type { Logger } from './logger.js';
import { isLocalAddress, requestOrigin } from './origin.js';

/**
 * The HTTP layer: turns a node:http request into an Exchange for the dispatcher and writes its
 * Reply with ASMX's transport rules: Content-Length always (never chunked), Cache-Control
 * `private` or `private, max-age=0`, and no header that advertises the stack. node:http is used
 * bare because the answer bytes are ours to the last header, and the benchmark shows its cost.
 */
export function createHttpServer(config: Config, dispatcher: Dispatcher, log: Logger): Server {
  const server = createServer({
    requestTimeout: config.requestTimeoutMs,
    // Node checks time-outs on this interval (30 s by default): often enough to cut slow clients.
    connectionsCheckingInterval: Math.min(1000, config.requestTimeoutMs),
    headersTimeout: config.headersTimeoutMs,
    keepAliveTimeout: config.keepAliveTimeoutMs,
  });
  const bootId = randomBytes(4).toString('hex');
  let counter = 0;

  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const started = process.hrtime.bigint();
    const requestId = `${bootId}-${(++counter).toString(36)}`;
    let bodyRefused = false;
    const exchange = {
      method: req.method ?? 'GET',
      url: req.url ?? '/',
      header: (name: string): string | undefined => {
        const v = req.headers[name];
        return Array.isArray(v) ? v.join(', ') : v;
      },
      readBody: async (): Promise<Buffer> => {
        try {
          return await readBody(req, config.maxBodyBytes);
        } catch (err) {
          if (err instanceof RequestTooLargeError) bodyRefused = true;
          throw err;
        }
      },
      origin: () => requestOrigin(req, config),
      isLocal: isLocalAddress(req.socket.remoteAddress),
    };
    dispatcher
      .dispatch(exchange)
      .catch((err: unknown): Outcome => {
        log.error({ err, requestId }, 'unexpected failure while answering');
        return {
          reply: { status: 500, contentType: 'text/plain; charset=utf-8', body: 'An internal error occurred.\r\n', invoked: false },
        };
      })
      .then((outcome) => {
        write(res, outcome, requestId, bodyRefused);
        const ms = Number(process.hrtime.bigint() - started) / 1e6;
        const entry = {
          requestId,
          method: exchange.method,
          service: outcome.service,
          operation: outcome.operation,
          binding: outcome.binding,
          status: outcome.reply.status,
          ms: Math.round(ms * 1000) / 1000,
        };
        if (outcome.cause !== undefined) log.error({ ...entry, err: outcome.cause }, 'operation failed');
        else log.info(entry, 'request');
      });
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

function write(res: ServerResponse, outcome: Outcome, requestId: string, closeAfter: boolean): void {
  const { reply } = outcome;
  const body = Buffer.from(reply.body, 'utf8');
  const headers: Record<string, string | number> = {
    'Cache-Control': reply.invoked ? 'private, max-age=0' : 'private',
  };
  if (reply.contentType !== null) headers['Content-Type'] = reply.contentType;
  headers['Content-Length'] = body.length;
  headers['X-Request-Id'] = requestId;
  for (const [name, value] of reply.headers ?? []) headers[name] = value;
  // A refused body was not read to its end: the connection cannot carry another request.
  if (closeAfter) headers['Connection'] = 'close';
  res.writeHead(reply.status, headers);
  res.end(body);
  if (closeAfter) res.on('finish', () => res.socket?.destroySoon());
}
