/**
 * What runs before dispatch: the allow-list, the rate limit, then API keys (a guessed key counts
 * against the limit). A refusal is answered without reading the body or touching the database.
 */
import type { IncomingMessage } from 'node:http';
import type { Config } from '../config/config.js';
import { clientAddress } from '../http/origin.js';
import { AccessControl } from './access.js';
import type { Refusal } from './access.js';
import type { RateDecision, RateLimiter } from './rate-limit.js';

export type { Refusal };

export class Gate {
  private readonly access: AccessControl;
  /** lower-case name -> the service file's own spelling (the metrics label). */
  private readonly names: ReadonlyMap<string, string>;

  constructor(
    private readonly config: Config,
    private readonly limiter: RateLimiter | null,
    serviceNames: readonly string[],
  ) {
    this.access = new AccessControl(config);
    this.names = new Map(serviceNames.map((n) => [n.toLowerCase(), n]));
  }

  /** The service file a request target names, as the service spells it, or null. */
  serviceName(url: string): string | null {
    const lower = serviceOf(url, this.config.basePath);
    return lower === null ? null : (this.names.get(lower) ?? null);
  }

  /** False when nothing is configured: the server then skips the gate on its hot path. */
  get enabled(): boolean {
    return this.access.enabled || this.limiter !== null;
  }

  check(req: IncomingMessage, header: (name: string) => string | undefined): Refusal | null | Promise<Refusal | null> {
    const address = clientAddress(req, this.config);
    const service = this.serviceName(req.url ?? '/')?.toLowerCase() ?? null;
    const denied = this.access.checkAddress(service, address);
    if (denied !== null) return denied;
    if (this.limiter === null) return this.access.checkKey(service, header);
    const decision = this.limiter.hit(address);
    const then = (d: RateDecision): Refusal | null => (d.allowed ? this.access.checkKey(service, header) : tooMany(d.retryAfterMs));
    return decision instanceof Promise ? decision.then(then) : then(decision);
  }

  async close(): Promise<void> {
    await this.limiter?.close();
  }
}

function tooMany(retryAfterMs: number): Refusal {
  const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
  return { status: 429, headers: [['Retry-After', String(seconds)]], body: 'Too Many Requests: slow down and retry later.\r\n' };
}

/** The service file a URL names, lower case, or null (the dispatcher decides the rest). */
export function serviceOf(url: string, basePath: string): string | null {
  const q = url.indexOf('?');
  let path = q < 0 ? url : url.slice(0, q);
  try {
    path = decodeURIComponent(path);
  } catch {
    return null;
  }
  if (!path.startsWith(basePath)) return null;
  const m = /^([^/]+)\.asmx(?:\/|$)/i.exec(path.slice(basePath.length));
  return m === null ? null : m[1]!.toLowerCase();
}
