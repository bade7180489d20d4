import { createServer } from 'node:http';
import type { Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { Duplex } from 'node:stream';
import { connectAnswer, unparsableRequestAnswer } from '../bindings/replies.js';
import type { Config } from '../config/config.js';
import type { Logger } from '../logging/logger.js';
import { RequestHandler } from './request-handler.js';
import type { Answerer, ServerHooks } from './request-handler.js';

export type { Answerer, ServerHooks, ServerState } from './request-handler.js';

/**
 * The HTTP layer: turns a node:http request into an Exchange for the dispatcher and writes its
 * Reply with ASMX's transport rules: Content-Length (chunked only for a list longer than a page,
 * decision 17), Cache-Control `private` or `private, max-age=0`, and no header that advertises
 * the stack. node:http is used
 * bare because the answer bytes are ours to the last header, and the benchmark shows its cost.
 */
export function createHttpServer(config: Config, dispatcher: Answerer, log: Logger, hooks: ServerHooks = {}): Server {
  const timeouts = {
    requestTimeout: config.requestTimeoutMs,
    // Node checks time-outs on this interval (30 s by default): often enough to cut slow clients.
    connectionsCheckingInterval: Math.min(1000, config.requestTimeoutMs),
    headersTimeout: config.headersTimeoutMs,
    keepAliveTimeout: config.keepAliveTimeoutMs,
  };
  const server: Server =
    config.tls === null
      ? createServer(timeouts)
      : createHttpsServer({ ...timeouts, cert: config.tls.cert, key: config.tls.key });
  server.on('request', new RequestHandler(config, dispatcher, log, hooks).handle);
  server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
    // Malformed requests, oversized headers and time-outs: answer plainly when we still can.
    if (!socket.writable) return socket.destroy();
    socket.end(unparsableRequestAnswer(err.code));
    // A client that never reads would keep the half-closed socket: drop it shortly after.
    setTimeout(() => socket.destroy(), 1000).unref();
  });
  // Without a listener node:http closes a CONNECT's connection without a word (RFC 9112 asks for an answer).
  server.on('connect', (_req, socket: Duplex) => {
    // The socket is handed over without node:http's error listener: a reset must not end the process.
    socket.on('error', () => socket.destroy());
    if (!socket.writable) return socket.destroy();
    socket.end(connectAnswer());
    setTimeout(() => socket.destroy(), 1000).unref();
  });
  return server;
}
