/**
 * The rate limit shared by instances: one script per request in Redis (the client's count, and
 * its /48's when it has one). Loaded only when a Redis is configured (ioredis is a large module).
 * A Redis that cannot be reached lets requests through, at once once it is known lost
 * (sms/fail-fast-redis.ts); that is logged once when it starts and once when Redis answers again
 * (one state with the SMS counters' connection: observe/dependency-health.ts).
 */
import type { Redis } from 'ioredis';
import type { RateLimit } from '../config/parse-settings.js';
import { REDIS_UNREACHABLE } from '../observe/dependency-health.js';
import type { Dependency } from '../observe/dependency-health.js';
import { FailFastRedis } from '../sms/fail-fast-redis.js';
import { ALLOWED, REQUEST_LIMITS } from './rate-limit.js';
import type { LimiterUse, RateDecision, RateLimiter } from './rate-limit.js';

// Count, and open the window on the first hit; answers the count and the window's time left.
const HIT_SCRIPT = `
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]); ttl = tonumber(ARGV[1]) end
return {n, ttl}`;

// A client's hit and its /48's: the /48 counts only what the client's own limit let through.
// Answers 1 (allowed) or 0, and the time left of the window that refused.
const SITE_HIT_SCRIPT = `
local function hit(key)
  local n = redis.call('INCR', key)
  if n == 1 then redis.call('PEXPIRE', key, ARGV[1]) end
  local ttl = redis.call('PTTL', key)
  if ttl < 0 then redis.call('PEXPIRE', key, ARGV[1]); ttl = tonumber(ARGV[1]) end
  return n, ttl
end
local n, ttl = hit(KEYS[1])
if n > tonumber(ARGV[2]) then return {0, ttl} end
local s, sttl = hit(KEYS[2])
if s > tonumber(ARGV[3]) then return {0, sttl} end
return {1, 0}`;

type HitRedis = Redis & {
  sisHit(key: string, windowMs: number): Promise<[number, number]>;
  sisSiteHit(
    key: string,
    siteKey: string,
    windowMs: number,
    limit: number,
    siteLimit: number,
  ): Promise<[number, number]>;
};

export class RedisRateLimiter implements RateLimiter {
  private readonly redis: FailFastRedis<HitRedis>;
  private readonly prefix: string;
  private readonly sitePrefix: string;
  /** Requests let through because Redis did not answer (for metrics and tests). */
  failures = 0;

  /** `use`: what it counts (its keys, its part of the Redis state; the SMS counters have their own). */
  constructor(
    url: string,
    timeoutMs: number,
    private readonly rule: RateLimit,
    private readonly state: Dependency,
    private readonly use: LimiterUse = REQUEST_LIMITS,
    private readonly siteLimit: number | null = null,
  ) {
    // Fails fast while Redis is lost: a request must not wait for Redis to come back.
    this.redis = new FailFastRedis(
      url,
      timeoutMs,
      (redis) => {
        redis.defineCommand('sisHit', { numberOfKeys: 1, lua: HIT_SCRIPT });
        redis.defineCommand('sisSiteHit', { numberOfKeys: 2, lua: SITE_HIT_SCRIPT });
        return redis as HitRedis;
      },
      {
        failed: (err) => state.failed(REDIS_UNREACHABLE, err, use.part),
        worked: (startedAt) => state.worked(use.part, startedAt),
      },
    );
    this.state.affects(use.effect);
    // The rule is part of the key: instances with different rules do not share counts.
    this.prefix = `sis:${use.key}:${rule.limit}/${rule.windowMs}:`;
    // So is the /48's allowance; `/48=` begins no client's key.
    this.sitePrefix = `${this.prefix}/48=${siteLimit}:`;
  }

  /** Connects now, so the first requests are counted; a Redis that is down only logs. */
  start(): Promise<void> {
    return this.redis.start();
  }

  async hit(client: string, site: string | null = null): Promise<RateDecision> {
    try {
      const { limit, windowMs } = this.rule;
      const siteLimit = this.siteLimit;
      if (site !== null && siteLimit !== null) {
        const [allowed, ttl] = await this.redis.run((r) =>
          r.sisSiteHit(this.prefix + client, this.sitePrefix + site, windowMs, limit, siteLimit),
        );
        return allowed === 1 ? ALLOWED : { allowed: false, retryAfterMs: ttl };
      }
      const [count, ttl] = await this.redis.run((r) => r.sisHit(this.prefix + client, windowMs));
      return count <= limit ? ALLOWED : { allowed: false, retryAfterMs: ttl };
    } catch {
      this.failures++;
      return ALLOWED;
    }
  }

  close(): Promise<void> {
    return this.redis.close();
  }
}
