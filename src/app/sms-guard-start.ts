/**
 * Starts AuthCode's SMS protection (src/sms/) for this process: its counters in Redis when one
 * is configured and a velocity limit is on, else in the database; the phone metadata loaded
 * now when a rule needs it (a default region it does not know stops the start).
 */
import { ConfigError } from '../config/config.js';
import type { Config } from '../config/config.js';
import type { Logger } from '../logging/logger.js';
import { REDIS_UNREACHABLE } from '../observe/dependency-health.js';
import type { DependencyHealth } from '../observe/dependency-health.js';
import type { RedisCounters } from '../sms/redis-counters.js';
import { SmsGuard } from '../sms/sms-guard.js';
import type { VelocityLimits } from '../sms/sms-rules.js';
import type { SmsStore } from '../store/sms-types.js';
import type { Store } from '../store/store.js';

/** The counters' connection, one part of the Redis state (the rate limiter has its own). */
const PART = 'SMS counters';

export async function startSmsGuard(
  config: Config,
  log: Logger,
  store: Store,
  health: DependencyHealth,
): Promise<SmsGuard> {
  const smsStore = (store as Partial<{ sms: SmsStore }>).sms ?? null;
  const redis =
    config.redisUrl !== null && countsAnything(config.sms.velocity)
      ? await redisCounters(config.redisUrl, health)
      : null;
  const guard = new SmsGuard({ rules: config.sms, maxPerHour: config.authCodesPerHour, store: smsStore, redis, log });
  try {
    await guard.start();
  } catch (error) {
    await guard.stop();
    throw new ConfigError([error instanceof Error ? error.message : String(error)]);
  }
  return guard;
}

function countsAnything(v: VelocityLimits): boolean {
  return (
    v.perAddressHour > 0 || v.perRangeHour > 0 || v.countryDaily !== null || v.hourlyBudget > 0 || v.dailyBudget > 0
  );
}

async function redisCounters(url: string, health: DependencyHealth): Promise<RedisCounters> {
  // ioredis is loaded only when a Redis is configured.
  const { RedisCounters } = await import('../sms/redis-counters.js');
  health.redis.affects('AuthCode counts its velocity limits in the database until it answers again');
  const counters = new RedisCounters(
    url,
    (err) => health.redis.failed(REDIS_UNREACHABLE, err, PART),
    () => health.redis.worked(PART),
  );
  await counters.start();
  return counters;
}
