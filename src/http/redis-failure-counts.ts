/**
 * The report brake's counts shared by instances (failure-counts.ts): one script per report, which
 * reads every key's count, and counts a failure only when none is braked, in one atomic step; so
 * a thousand reports at once from one client on any number of instances get no more checks
 * answered than the window allows. Loaded only when a Redis is configured. A Redis that cannot be
 * reached brakes no one (each report is still checked, and a forged one refused), told once by the
 * Redis state (observe/dependency-health.ts).
 */
import type { Redis } from 'ioredis';
import type { LimiterUse } from '../access/rate-limit.js';
import { REDIS_UNREACHABLE } from '../observe/dependency-health.js';
import type { Dependency } from '../observe/dependency-health.js';
import { FailFastRedis } from '../sms/fail-fast-redis.js';
import type { FailureCounts, FailureKey } from './failure-counts.js';

// ARGV: the window (ms), 1 to count a failure, then each key's allowance. Answers the wait (ms).
const WEIGH_SCRIPT = `
local wait = 0
for i, key in ipairs(KEYS) do
  local n = tonumber(redis.call('GET', key) or '0')
  if n >= tonumber(ARGV[i + 2]) then
    local ttl = redis.call('PTTL', key)
    if ttl < 0 then redis.call('PEXPIRE', key, ARGV[1]); ttl = tonumber(ARGV[1]) end
    if ttl > wait then wait = ttl end
  end
end
if wait == 0 and ARGV[2] == '1' then
  for _, key in ipairs(KEYS) do
    local n = redis.call('INCR', key)
    if n == 1 or redis.call('PTTL', key) < 0 then redis.call('PEXPIRE', key, ARGV[1]) end
  end
end
return wait`;

type WeighRedis = Redis & { sisWeigh(...args: (string | number)[]): Promise<number> };

export class RedisFailureCounts implements FailureCounts {
  readonly #redis: FailFastRedis<WeighRedis>;
  readonly #prefix: string;

  constructor(
    url: string,
    timeoutMs: number,
    private readonly windowMs: number,
    state: Dependency,
    use: LimiterUse,
  ) {
    this.#redis = new FailFastRedis(
      url,
      timeoutMs,
      (redis) => {
        redis.defineCommand('sisWeigh', { lua: WEIGH_SCRIPT });
        return redis as WeighRedis;
      },
      {
        failed: (err) => state.failed(REDIS_UNREACHABLE, err, use.part),
        worked: (startedAt) => state.worked(use.part, startedAt),
      },
    );
    state.affects(use.effect);
    // The window is part of the key: instances with different rules do not share counts.
    this.#prefix = `sis:${use.key}:${windowMs}:`;
  }

  /** Connects now, so the first reports are counted; a Redis that is down only logs. */
  start(): Promise<void> {
    return this.#redis.start();
  }

  async weigh(keys: readonly FailureKey[], failed: boolean): Promise<number> {
    try {
      return await this.#redis.run((r) =>
        r.sisWeigh(
          keys.length,
          ...keys.map((k) => this.#prefix + k.key),
          this.windowMs,
          failed ? '1' : '0',
          ...keys.map((k) => k.allowed),
        ),
      );
    } catch {
      return 0;
    }
  }

  close(): Promise<void> {
    return this.#redis.close();
  }
}
