/**
 * Graceful stop of an HTTP server. Node's `server.close()` also closes idle keep-alive
 * connections at once, and a client that just sent a request on one gets a reset. Here, in two
 * steps: stop listening (new connections are refused); then answer every request that arrives,
 * with `Connection: close`, close connections still idle after the grace period, and cut what
 * is left at the time-out. A cluster stops every worker's listener before any drains, so that
 * clients told to reconnect find the port closed rather than a worker on its way out.
 */
import type { Server } from 'node:http';
import { Server as NetServer } from 'node:net';
import type { Logger } from '../logging/logger.js';
import type { ServerState } from './server.js';

export interface DrainOptions {
  readonly graceMs: number;
  /** From the start of the drain; connections still open then are destroyed. */
  readonly timeoutMs: number;
}

export class Drainer {
  private closed: Promise<void> | null = null;

  constructor(
    private readonly server: Server,
    private readonly state: ServerState,
  ) {}

  /** Refuses new connections; open ones go on as before. Idempotent. */
  stopListening(): Promise<void> {
    // net.Server's close: http.Server's would also drop the idle keep-alive connections.
    this.closed ??= new Promise<void>((resolve) => {
      NetServer.prototype.close.call(this.server, () => resolve());
    });
    return this.closed;
  }

  /** Resolves true when every connection ended by itself, false when some had to be cut. */
  async drain(options: DrainOptions, log: Logger): Promise<boolean> {
    const started = Date.now();
    const closed = this.stopListening();
    this.state.draining = true;
    const within = (ms: number): Promise<boolean> => {
      let timer: NodeJS.Timeout | undefined;
      return Promise.race([
        closed.then(() => true),
        new Promise<boolean>((resolve) => {
          timer = setTimeout(() => resolve(false), Math.max(0, ms));
        }),
      ]).finally(() => clearTimeout(timer));
    };
    if (await within(Math.min(options.graceMs, options.timeoutMs))) return true;
    // Grace over: idle connections go now; busy ones close after their answer (Connection: close).
    this.server.closeIdleConnections();
    const sweep = setInterval(() => this.server.closeIdleConnections(), 100);
    try {
      if (await within(options.timeoutMs - (Date.now() - started))) return true;
    } finally {
      clearInterval(sweep);
    }
    log.warn(
      { timeoutMs: options.timeoutMs },
      'shutdown time-out: closing connections with requests still in progress',
    );
    this.server.closeAllConnections();
    await closed;
    return false;
  }
}
