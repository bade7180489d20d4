/**
 * The velocity counters in Redis, when SIS_REDIS_URL is set: one script checks every counter and
 * counts the code in all of them only when none is full, atomically, so instances never both
 * take the last place. Loaded only when a Redis is configured (ioredis is a large module). A Redis
 * that does not answer within its deadline, or is known lost, is told to the caller at once
 * (fail-fast-redis.ts), which then checks in the database instead: the database counts every
 * accepted code in any case (docs/decisions.md), so the limits hold while Redis is away and after
 * it comes back.
 */
import type { Redis } from 'ioredis';
import type { CounterLimit } from '../store/store.js';
import { FailFastRedis } from './fail-fast-redis.js';
import type { RedisEvents } from './fail-fast-redis.js';

// KEYS: counters; ARGV: their limits, their windows' ends (ms), then '1' for each enforced counter and
// '0' for each watched one (monitor mode). Returns {i} when the i-th (1-based) is an enforced counter
// already full (nothing counted), else {0, watched counters past their limit...}.
const CHECK = `
local n = #KEYS
for i = 1, n do
  if ARGV[2 * n + i] == '1' and tonumber(redis.call('GET', KEYS[i]) or '0') >= tonumber(ARGV[i]) then return {i} end
end
local over = {0}`;
const TAKE = `${CHECK}
for i = 1, n do
  local hits = redis.call('INCR', KEYS[i])
  if hits == 1 then redis.call('PEXPIREAT', KEYS[i], ARGV[n + i]) end
  if hits > tonumber(ARGV[i]) then over[#over + 1] = i end
end
return over`;
const PEEK = `${CHECK}
for i = 1, n do
  if tonumber(redis.call('GET', KEYS[i]) or '0') >= tonumber(ARGV[i]) then over[#over + 1] = i end
end
return over`;
const RELEASE = `
for i = 1, #KEYS do
  if tonumber(redis.call('GET', KEYS[i]) or '0') > 0 then redis.call('DECR', KEYS[i]) end
end
return 0`;

// KEYS[1]: a counter the database found full; ARGV: its limit, its window's end (ms). Raised to the limit, never lowered.
const FILL = `
if tonumber(redis.call('GET', KEYS[1]) or '0') < tonumber(ARGV[1]) then
  redis.call('SET', KEYS[1], ARGV[1])
  redis.call('PEXPIREAT', KEYS[1], ARGV[2])
end
return 0`;

type CounterRedis = Redis & {
  sisTake(n: number, ...keysAndArgs: string[]): Promise<number[]>;
  sisPeek(n: number, ...keysAndArgs: string[]): Promise<number[]>;
  sisRelease(n: number, ...keys: string[]): Promise<number>;
  sisFill(key: string, limit: string, until: string): Promise<number>;
};

/** The first enforced counter that is full (nothing counted), or null and the watched counters past their limit. */
export type CounterAnswer =
  { readonly full: CounterLimit | null; readonly over: readonly CounterLimit[] } | 'unavailable';

const NONE_FULL: CounterAnswer = { full: null, over: [] };

export class RedisCounters {
  private readonly redis: FailFastRedis<CounterRedis>;

  constructor(url: string, timeoutMs: number, events: RedisEvents) {
    // Fails fast while Redis is lost: the database counts meanwhile.
    this.redis = new FailFastRedis(
      url,
      timeoutMs,
      (redis) => {
        redis.defineCommand('sisTake', { lua: TAKE });
        redis.defineCommand('sisPeek', { lua: PEEK });
        redis.defineCommand('sisRelease', { lua: RELEASE });
        redis.defineCommand('sisFill', { numberOfKeys: 1, lua: FILL });
        return redis as CounterRedis;
      },
      events,
    );
  }

  start(): Promise<void> {
    return this.redis.start();
  }

  /**
   * Counts the code in every counter, unless one is full (then that one, nothing counted).
   * `space` names the database the counters are of: services on other databases sharing this
   * Redis never count in each other's counters.
   */
  take(space: string, counters: readonly CounterLimit[]): Promise<CounterAnswer> {
    return this.run(space, counters, (r, keys, args) => r.sisTake(keys.length, ...keys, ...args));
  }

  /** The first full enforced counter, and the watched ones already full, counting nothing (a dry run). */
  peek(space: string, counters: readonly CounterLimit[]): Promise<CounterAnswer> {
    return this.run(space, counters, (r, keys, args) => r.sisPeek(keys.length, ...keys, ...args));
  }

  /** Gives back what `take` counted (the database refused the code after all). */
  async release(space: string, counters: readonly CounterLimit[]): Promise<void> {
    if (counters.length === 0) return;
    const keys = counters.map((c) => redisKey(space, c));
    // A failure is reported by the connection; the counts then expire with their window.
    await this.redis.run((r) => r.sisRelease(keys.length, ...keys)).catch(() => undefined);
  }

  /**
   * Holds `counter` full: the database refused a code for it while Redis had room (Redis came back
   * empty, or missed the codes counted while it was away), so its next codes are refused here.
   */
  async fill(space: string, counter: CounterLimit): Promise<void> {
    const key = redisKey(space, counter);
    // A failure is reported by the connection; the database keeps refusing meanwhile.
    await this.redis
      .run((r) => r.sisFill(key, String(counter.limit), String(counter.until.getTime())))
      .catch(() => undefined);
  }

  private async run(
    space: string,
    counters: readonly CounterLimit[],
    script: (redis: CounterRedis, keys: string[], args: string[]) => Promise<number[]>,
  ): Promise<CounterAnswer> {
    if (counters.length === 0) return NONE_FULL;
    const keys = counters.map((c) => redisKey(space, c));
    const args = [
      ...counters.map((c) => String(c.limit)),
      ...counters.map((c) => String(c.until.getTime())),
      ...counters.map((c) => (c.monitor === true ? '0' : '1')),
    ];
    try {
      const [full, ...over] = await this.redis.run((r) => script(r, keys, args));
      if (full !== 0) return { full: counters[full! - 1]!, over: [] };
      return over.length === 0 ? NONE_FULL : { full: null, over: over.map((i) => counters[i - 1]!) };
    } catch {
      return 'unavailable';
    }
  }

  close(): Promise<void> {
    return this.redis.close();
  }
}

function redisKey(space: string, counter: CounterLimit): string {
  return `sis:sms:${space}:${counter.key}`;
}
