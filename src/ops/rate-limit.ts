/**
 * Rate limits per client address: a fixed window that opens at a client's first request. In
 * memory for one process; in Redis (one INCR script per request) when instances share a limit.
 * A Redis that cannot be reached lets requests through: the limit protects the service, it must
 * not become the reason it is down.
 */
import { Redis } from 'ioredis';
import type { Logger } from '../http/logger.js';
import type { RateLimit } from './parse-settings.js';

export interface RateDecision {
  readonly allowed: boolean;
  /** When the client may try again (when refused). */
  readonly retryAfterMs: number;
}

export interface RateLimiter {
  hit(address: string): RateDecision | Promise<RateDecision>;
  close(): Promise<void>;
}

const ALLOWED: RateDecision = { allowed: true, retryAfterMs: 0 };

export class MemoryRateLimiter implements RateLimiter {
  private readonly windows = new Map<string, { count: number; resetAt: number }>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly rule: RateLimit) {
    // Forget closed windows now and then, so the map holds only recent clients.
    this.sweeper = setInterval(() => this.sweep(), Math.max(rule.windowMs, 1000)).unref();
  }

  hit(address: string): RateDecision {
    const now = Date.now();
    const w = this.windows.get(address);
    if (w === undefined || w.resetAt <= now) {
      this.windows.set(address, { count: 1, resetAt: now + this.rule.windowMs });
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

// Count, and open the window on the first hit; answers the count and the window's time left.
const HIT_SCRIPT = `
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]); ttl = tonumber(ARGV[1]) end
return {n, ttl}`;

type HitRedis = Redis & { sisHit(key: string, windowMs: number): Promise<[number, number]> };

export class RedisRateLimiter implements RateLimiter {
  private readonly redis: HitRedis;
  private readonly prefix: string;
  private lastWarning = 0;
  /** Requests let through because Redis did not answer (for metrics and tests). */
  failures = 0;

  constructor(
    url: string,
    private readonly rule: RateLimit,
    private readonly log: Logger,
  ) {
    this.redis = new Redis(url, {
      lazyConnect: true,
      // Fail fast while disconnected: a request must not wait for Redis to come back.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: 500,
      connectTimeout: 2000,
    }) as HitRedis;
    this.redis.defineCommand('sisHit', { numberOfKeys: 1, lua: HIT_SCRIPT });
    this.redis.on('error', (err: Error) => this.warn(err));
    // The rule is part of the key: instances with different rules do not share counts.
    this.prefix = `sis:rl:${rule.limit}/${rule.windowMs}:`;
  }

  /** Connects now, so the first requests are counted; a Redis that is down only logs. */
  async start(): Promise<void> {
    try {
      await this.redis.connect();
    } catch (err) {
      this.warn(err as Error);
    }
  }

  async hit(address: string): Promise<RateDecision> {
    try {
      const [count, ttl] = await this.redis.sisHit(this.prefix + address, this.rule.windowMs);
      return count <= this.rule.limit ? ALLOWED : { allowed: false, retryAfterMs: ttl };
    } catch (err) {
      this.failures++;
      this.warn(err as Error);
      return ALLOWED;
    }
  }

  private warn(err: Error): void {
    const now = Date.now();
    if (now - this.lastWarning < 10_000) return; // one line per 10 s, not one per request
    this.lastWarning = now;
    this.log.warn({ err }, 'rate limit: Redis unavailable, requests are let through');
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }
}

export async function createRateLimiter(rule: RateLimit, redisUrl: string | null, log: Logger): Promise<RateLimiter> {
  if (redisUrl === null) return new MemoryRateLimiter(rule);
  const limiter = new RedisRateLimiter(redisUrl, rule, log);
  await limiter.start();
  return limiter;
}
