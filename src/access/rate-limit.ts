/**
 * Rate limits per client (src/address/client-network.ts clientKey: one IPv4 address however it is
 * written, an IPv6 prefix): a fixed window that opens at a client's first request. A native IPv6
 * client's /48 is counted too, with its own larger allowance (SIS_RATE_LIMIT_IPV6_48), but only by
 * the requests its client's own limit let through: one /64 over its limit cannot use up its
 * neighbours' share. In memory for one process; in Redis (one script per request) when instances
 * share a limit.
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
  /** Counts a request of `client`, and of `site` (its /48) when the limiter has a /48 allowance. */
  hit(client: string, site?: string | null): RateDecision | Promise<RateDecision>;
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

  /** `siteLimit`: requests per /48 in the rule's window (null: no /48 counted). */
  constructor(
    private readonly rule: RateLimit,
    private readonly siteLimit: number | null = null,
  ) {
    // Forget closed windows now and then, so the map holds only recent clients.
    this.sweeper = setInterval(() => this.sweep(), Math.max(rule.windowMs, 1000)).unref();
  }

  hit(client: string, site: string | null = null): RateDecision {
    const now = Date.now();
    const own = this.count(client, this.rule.limit, now);
    // A space is in no client's key: a /48's count is never a client's.
    return !own.allowed || site === null || this.siteLimit === null
      ? own
      : this.count(`/48 ${site}`, this.siteLimit, now);
  }

  private count(key: string, limit: number, now: number): RateDecision {
    const w = this.windows.get(key);
    if (w === undefined || w.resetAt <= now) {
      this.windows.set(key, { count: 1, resetAt: now + this.rule.windowMs });
      return ALLOWED;
    }
    w.count++;
    return w.count <= limit ? ALLOWED : { allowed: false, retryAfterMs: w.resetAt - now };
  }

  private sweep(): void {
    const now = Date.now();
    for (const [key, w] of this.windows) if (w.resetAt <= now) this.windows.delete(key);
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
  }
}
