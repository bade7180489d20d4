/**
 * The rate limiter a configuration asks for: in memory for one process, in Redis when instances
 * share a limit. Apart from rate-limit.ts so that the Redis limiter, which builds on it, is not
 * imported back by it.
 */
import type { RateLimit } from '../config/parse-settings.js';
import type { Dependency } from '../observe/dependency-health.js';
import { MemoryRateLimiter, REQUEST_LIMITS } from './rate-limit.js';
import type { LimiterUse, RateLimiter } from './rate-limit.js';

/**
 * `redis` is the state Redis's failures and recoveries are told to (logged once per change);
 * `use`: what it counts (SIS_RATE_LIMIT's requests unless told); `siteLimit`: requests per IPv6
 * /48 in the rule's window beside each client's (null: no /48 counted).
 */
export async function createRateLimiter(
  rule: RateLimit,
  redisUrl: string | null,
  redisTimeoutMs: number,
  redis: Dependency,
  use: LimiterUse = REQUEST_LIMITS,
  siteLimit: number | null = null,
): Promise<RateLimiter> {
  if (redisUrl === null) return new MemoryRateLimiter(rule, siteLimit);
  // ioredis is loaded only when a Redis is configured: a process without one does not pay its memory.
  const { RedisRateLimiter } = await import('./redis-rate-limiter.js');
  const limiter = new RedisRateLimiter(redisUrl, redisTimeoutMs, rule, redis, use, siteLimit);
  await limiter.start();
  return limiter;
}
