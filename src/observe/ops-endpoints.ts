/**
 * `/healthz`, `/readyz` and `/metrics`, always at the root: no `.asmx` path can be one of them,
 * whatever SIS_BASE_PATH is. They are open to every caller (they expose no student data) and are
 * neither rate-limited nor counted in the request metrics.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../logging/logger.js';
import type { Store } from '../store/store.js';
import { noteDatabaseDown } from './database-watch.js';
import type { DependencyHealth } from './dependency-health.js';

export type OpsPath = 'healthz' | 'readyz' | 'metrics';

export interface MetricsText {
  readonly contentType: string;
  readonly body: string;
}

export interface OpsOptions {
  readonly store: Store;
  readonly metrics: () => Promise<MetricsText>;
  /** False until the database has been reached once since the start (PostgreSQL opened in the background). */
  readonly opened?: () => boolean;
  /** True once shutdown began: /readyz then answers 503 so balancers stop sending. */
  readonly draining: () => boolean;
  readonly log: Logger;
  /** The dependencies' states: a failed ping changes the database's; each failing one is named (degraded). */
  readonly health: DependencyHealth;
  readonly pingTimeoutMs?: number;
  /** The longest /readyz waits for its ping before answering from the state known (default 250 ms). */
  readonly answerWithinMs?: number;
}

/** Which ops endpoint a request target names, or null; cheap enough for every request. */
export function opsPath(url: string): OpsPath | null {
  if (url.length < 7 || url.charCodeAt(0) !== 47 /* / */) return null;
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  return path === '/healthz' ? 'healthz' : path === '/readyz' ? 'readyz' : path === '/metrics' ? 'metrics' : null;
}

export class OpsEndpoints {
  #pinging: Promise<void> | null = null;

  constructor(private readonly options: OpsOptions) {}

  async answer(path: OpsPath, req: IncomingMessage, res: ServerResponse, requestId: string): Promise<void> {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      return sendText(res, req, 405, 'text/plain; charset=utf-8', 'Method Not Allowed\n', requestId, [
        ['Allow', 'GET, HEAD'],
      ]);
    }
    if (path === 'healthz') return sendText(res, req, 200, 'text/plain; charset=utf-8', 'ok\n', requestId);
    if (path === 'readyz') {
      const problem = await this.readiness();
      if (problem !== null)
        return sendText(res, req, 503, 'text/plain; charset=utf-8', `not ready: ${problem}\n`, requestId);
      // Ready, but say what the service is working around (the database, Redis, the SMS gateway, …).
      const { health } = this.options;
      const degraded = health.degraded();
      const notes = [
        ...(degraded.length === 0 ? [] : [`degraded: ${degraded.join(', ')}`]),
        ...(health.clock === null ? [] : [`clock: ${health.clock}`]),
      ];
      const text = notes.length === 0 ? 'ready\n' : `ready (${notes.join('; ')})\n`;
      return sendText(res, req, 200, 'text/plain; charset=utf-8', text, requestId);
    }
    try {
      const { contentType, body } = await this.options.metrics();
      return sendText(res, req, 200, contentType, body, requestId);
    } catch (err) {
      this.options.log.error({ err, requestId }, 'metrics could not be collected');
      return sendText(res, req, 500, 'text/plain; charset=utf-8', 'metrics unavailable\n', requestId);
    }
  }

  /**
   * null when ready, else the reason (words for the operator, never the error's details). Ready
   * means this instance can serve: not stopping, and its database reached once since the start. A
   * database that stops answering later does not make it unready: every instance shares it, so
   * there is nowhere better to send requests, and this one answers the reads it knows meanwhile
   * (docs/operations.md, Health and metrics). The ping still runs, to tell the state (and its end)
   * when no request does; the answer waits for it only briefly, so a database that hangs does not
   * make the probe time out.
   */
  private async readiness(): Promise<string | null> {
    if (this.options.draining()) return 'shutting down';
    const ping = this.ping();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      ping,
      new Promise<void>((resolve) => (timer = setTimeout(resolve, this.options.answerWithinMs ?? 250))),
    ]);
    clearTimeout(timer);
    return this.options.opened?.() === false ? 'database' : null;
  }

  /** One ping at a time, whatever the number of probes: its outcome is the database's state. */
  private ping(): Promise<void> {
    return (this.#pinging ??= this.pingOnce().finally(() => (this.#pinging = null)));
  }

  private async pingOnce(): Promise<void> {
    const timeoutMs = this.options.pingTimeoutMs ?? 2000;
    let timer: NodeJS.Timeout | undefined;
    const startedAt = Date.now();
    try {
      await Promise.race([
        this.options.store.ping(),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
        }),
      ]);
      this.options.health.database.worked(undefined, startedAt);
    } catch (err) {
      // Logged once when the state changes, not at every probe.
      noteDatabaseDown(this.options.health, err, startedAt);
    } finally {
      clearTimeout(timer);
    }
  }
}

/** A short text answer that no cache keeps (the ops endpoints', the delivery receipts'); HEAD gets its headers only. */
export function sendText(
  res: ServerResponse,
  req: IncomingMessage,
  status: number,
  contentType: string,
  text: string,
  requestId: string,
  extra: readonly (readonly [string, string])[] = [],
): void {
  const body = Buffer.from(text, 'utf8');
  const headers: Record<string, string | number> = {
    'Content-Type': contentType,
    'Content-Length': body.length,
    'Cache-Control': 'no-store',
    'X-Request-Id': requestId,
  };
  for (const [name, value] of extra) headers[name] = value;
  res.writeHead(status, headers);
  res.end(req.method === 'HEAD' ? undefined : body);
}
