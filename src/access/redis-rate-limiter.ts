/**
 * The rate limit shared by instances: one INCR script per request in Redis. Loaded only when a
 * Redis is configured (ioredis is a large module). A Redis that cannot be reached lets requests
 * through, with one warning per 10 s.
 */
import { Redis } from 'ioredis';
import type { Logger } from '../logging/logger.js';
import type { RateLimit } from '../config/parse-settings.js';
import { ALLOWED } from './rate-limit.js';
import type { RateDecision, RateLimiter } from './rate-limit.js';

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
