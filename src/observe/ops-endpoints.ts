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
  /** True once shutdown began: /readyz then answers 503 so balancers stop sending. */
  readonly draining: () => boolean;
  readonly log: Logger;
  /** The dependencies' states: a failed ping changes the database's; the others are named when degraded. */
  readonly health: DependencyHealth;
  readonly pingTimeoutMs?: number;
}

/** Which ops endpoint a request target names, or null; cheap enough for every request. */
export function opsPath(url: string): OpsPath | null {
  if (url.length < 7 || url.charCodeAt(0) !== 47 /* / */) return null;
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  return path === '/healthz' ? 'healthz' : path === '/readyz' ? 'readyz' : path === '/metrics' ? 'metrics' : null;
}

export class OpsEndpoints {
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
      // Ready, but say what the service is working around (Redis, the SMS gateway, writes).
      const degraded = this.options.health.degraded();
      const text = degraded.length === 0 ? 'ready\n' : `ready (degraded: ${degraded.join(', ')})\n`;
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

  /** null when ready, else the reason (words for the operator, never the error's details). */
  private async readiness(): Promise<string | null> {
    if (this.options.draining()) return 'shutting down';
    const timeoutMs = this.options.pingTimeoutMs ?? 2000;
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        this.options.store.ping(),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
        }),
      ]);
      this.options.health.database.worked();
      return null;
    } catch (err) {
      // Logged once when the state changes, not at every probe.
      noteDatabaseDown(this.options.health, err);
      return 'database';
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
