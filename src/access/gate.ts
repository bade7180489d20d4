/**
 * What runs before dispatch: the allow-list, the rate limit, then API keys (a guessed key counts
 * against the limit). A refusal is answered without reading the body or touching the database.
 * The rate limit's Redis is waited for at most SIS_STALE_AFTER_MS (a read's whole budget for its
 * dependencies): past it the request is let through as when Redis is lost, its count still taken,
 * so Redis's deadline never adds to the database's.
 */
import type { RequestTarget } from '../bindings/types.js';
import type { Refusal } from '../bindings/types.js';
import type { Config } from '../config/config.js';
import { AccessControl } from './access.js';
import { ALLOWED } from './rate-limit.js';
import type { RateDecision, RateLimiter } from './rate-limit.js';

export type { Refusal };

/** What the gate needs of a request. */
export interface GateRequest {
  readonly target: RequestTarget | null;
  /** The client's address (behind a trusted proxy, the one X-Forwarded-For names): the allow-list's. */
  readonly clientAddress: string;
  /** The client it counts as (clientKey): the rate limit's. */
  readonly client: string;
  /** The /48 the rate limit also counts, with its larger allowance (siteNetwork); null: none. */
  readonly site: string | null;
  header(name: string): string | undefined;
}

export class Gate {
  private readonly access: AccessControl;
  /** lower-case name -> the service file's own spelling (the metrics label). */
  private readonly names: ReadonlyMap<string, string>;
  /** The longest wait for the limiter's answer (0: its own deadline). */
  private readonly limiterWaitMs: number;

  constructor(
    config: Config,
    private readonly limiter: RateLimiter | null,
    serviceNames: readonly string[],
  ) {
    this.access = new AccessControl(config);
    this.names = new Map(serviceNames.map((n) => [n.toLowerCase(), n]));
    this.limiterWaitMs = config.staleAfterMs;
  }

  /** The service file a request target names, as the service spells it, or null. */
  serviceName(target: RequestTarget | null): string | null {
    return target === null ? null : (this.names.get(target.serviceKey) ?? null);
  }

  /** False when nothing is configured: the server then skips the gate on its hot path. */
  get enabled(): boolean {
    return this.access.enabled || this.limiter !== null;
  }

  check(req: GateRequest): Refusal | null | Promise<Refusal | null> {
    const service = req.target !== null && this.names.has(req.target.serviceKey) ? req.target.serviceKey : null;
    const denied = this.access.checkAddress(service, req.clientAddress);
    if (denied !== null) return denied;
    const header = (name: string): string | undefined => req.header(name);
    if (this.limiter === null) return this.access.checkKey(service, header);
    const decision = this.limiter.hit(req.client, req.site);
    const then = (d: RateDecision): Refusal | null =>
      d.allowed ? this.access.checkKey(service, header) : { reason: 'rate', retryAfterMs: d.retryAfterMs };
    return decision instanceof Promise ? this.within(decision).then(then) : then(decision);
  }

  /** The limiter's decision, or ALLOWED if it has not come within limiterWaitMs (the API key is still checked). */
  private within(decision: Promise<RateDecision>): Promise<RateDecision> {
    const ms = this.limiterWaitMs;
    if (ms === 0) return decision;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => resolve(ALLOWED), ms);
      decision.then(
        (d) => {
          clearTimeout(timer);
          resolve(d);
        },
        (error: unknown) => {
          clearTimeout(timer);
          reject(error as Error);
        },
      );
    });
  }

  async close(): Promise<void> {
    await this.limiter?.close();
  }
}
