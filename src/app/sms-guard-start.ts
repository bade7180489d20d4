/**
 * Starts AuthCode's SMS protection (src/sms/) for this process: its counters in the database,
 * and first in Redis when one is configured and a velocity limit is on (docs/decisions.md, 25); the phone metadata loaded
 * now when a rule needs it (a default region it does not know stops the start); one line names the
 * layers that only watch (SIS_SMS_GUARD), so a rollout step never lifts a brake unseen.
 */
import { ConfigError } from '../config/config.js';
import type { Config } from '../config/config.js';
import type { Logger } from '../logging/logger.js';
import { REDIS_UNREACHABLE } from '../observe/dependency-health.js';
import type { DependencyHealth } from '../observe/dependency-health.js';
import type { RedisCounters } from '../sms/redis-counters.js';
import { watchedLayers } from '../sms/refusal.js';
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
      ? await redisCounters(config.redisUrl, config.redisTimeoutMs, health)
      : null;
  const guard = new SmsGuard({ rules: config.sms, maxPerHour: config.authCodesPerHour, store: smsStore, redis, log });
  try {
    await guard.start();
  } catch (error) {
    await guard.stop();
    throw new ConfigError([error instanceof Error ? error.message : String(error)]);
  }
  logCountryLimits(config, log);
  // NODE_ENV is the platform's word for a production deploy (the image sets it): test numbers there are worth a look.
  if (config.sms.testNumbers.size > 0 && process.env['NODE_ENV'] === 'production')
    log.warn(
      { testNumbers: config.sms.testNumbers.size },
      `SIS_SMS_TEST_NUMBERS is set under NODE_ENV=production: codes to those ${config.sms.testNumbers.size} numbers are accepted without an SMS (at most SIS_SMS_TEST_CODES_PER_HOUR=${config.sms.testCodesPerHour} an hour each); keep them only for an app-store review, and remove them after`,
    );
  const watched = watchedLayers(config.sms.monitored);
  if (watched.length > 0)
    log.warn(
      { watched },
      `SMS guard: not enforced (SIS_SMS_GUARD, monitor mode): ${watched.join(', ')}; these layers refuse no code, only count and log what they would refuse`,
    );
  return guard;
}

/** One line: which country gets which daily limit (a school outside the region would otherwise learn it on its busiest day). */
function logCountryLimits(config: Config, log: Logger): void {
  const limits = config.sms.velocity.countryDaily;
  if (limits === null) return;
  const region = config.sms.phone.defaultRegion;
  const named = [...limits.byCountry].map(([country, n]) => `${country}${country === region ? ' (home)' : ''} ${n}`);
  const other = limits.other === null || limits.other === 0 ? 'no limit' : String(limits.other);
  const line = `SMS country limits, codes a day: ${[...named, `every other country ${other}`].join(', ')}`;
  if (region === null && limits.home !== null)
    log.warn(
      { countryDaily: line },
      `${line}; SIS_SMS_DEFAULT_REGION is unset, so no country gets the home limit (${limits.home}): set it to the school's country (e.g. GB) so its parents do`,
    );
  else log.info({ countryDaily: line }, line);
}

function countsAnything(v: VelocityLimits): boolean {
  return (
    v.perAddressHour > 0 ||
    v.perIpv6SiteHour > 0 ||
    v.perRangeHour > 0 ||
    v.countryDaily !== null ||
    v.hourlyBudget > 0 ||
    v.dailyBudget > 0
  );
}

async function redisCounters(url: string, timeoutMs: number, health: DependencyHealth): Promise<RedisCounters> {
  // ioredis is loaded only when a Redis is configured.
  const { RedisCounters } = await import('../sms/redis-counters.js');
  health.redis.affects('AuthCode counts its velocity limits in the database until it answers again');
  const counters = new RedisCounters(url, timeoutMs, {
    failed: (err) => health.redis.failed(REDIS_UNREACHABLE, err, PART),
    worked: (startedAt) => health.redis.worked(PART, startedAt),
  });
  await counters.start();
  return counters;
}
