/**
 * Rate limits per client (src/address/client-network.ts clientKey: one IPv4 address however it is
 * written, an IPv6 prefix): a fixed window that opens at a client's first request. In
 * memory for one process; in Redis (one INCR script per request) when instances share a limit.
 * A Redis that cannot be reached lets requests through: the limit protects the service, it must
 * not become the reason it is down.
 */
import type { RateLimit } from '../config/parse-settings.js';

export interface RateDecision {
  readonly allowed: boolean;
  /** When the client may try again (when refused). */
  readonly retryAfterMs: number;
}

export interface RateLimiter {
  hit(client: string): RateDecision | Promise<RateDecision>;
  close(): Promise<void>;
}

export const ALLOWED: RateDecision = { allowed: true, retryAfterMs: 0 };

/** What a limiter counts, as Redis's keys and its state's lines say it. */
export interface LimiterUse {
  /** Its keys' part (`sis:<key>:…`): limiters with different uses never share counts. */
  readonly key: string;
  /** Its connection, one part of the Redis state. */
  readonly part: string;
  /** What happens while Redis does not answer. */
  readonly effect: string;
}

/** SIS_RATE_LIMIT's requests. */
export const REQUEST_LIMITS: LimiterUse = {
  key: 'rl',
  part: 'rate limits',
  effect: 'rate limits (SIS_RATE_LIMIT) are not enforced: requests are let through until it answers again',
};

export class MemoryRateLimiter implements RateLimiter {
  private readonly windows = new Map<string, { count: number; resetAt: number }>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly rule: RateLimit) {
    // Forget closed windows now and then, so the map holds only recent clients.
    this.sweeper = setInterval(() => this.sweep(), Math.max(rule.windowMs, 1000)).unref();
  }

  hit(client: string): RateDecision {
    const now = Date.now();
    const w = this.windows.get(client);
    if (w === undefined || w.resetAt <= now) {
      this.windows.set(client, { count: 1, resetAt: now + this.rule.windowMs });
      return ALLOWED;
    }
    w.count++;
    return w.count <= this.rule.limit ? ALLOWED : { allowed: false, retryAfterMs: w.resetAt - now };
  }

  private sweep(): void {
    const now = Date.now();
    for (const [key, w] of this.windows) if (w.resetAt <= now) this.windows.delete(key);
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
  }
}
