/**
 * The counters a code is counted in (docs/sms.md), cheapest to fill first: its client address
 * (and a native IPv6 client's /48) and its range per clock hour, its country per UTC day, the global hourly and daily budgets.
 * Fixed windows: a counter's key names its window, so every instance counts in the same one and
 * the counter is forgotten when the window ends; a caller may get up to twice a limit across a
 * window's edge, which no limit here needs to prevent.
 */
import type { CounterLimit } from '../store/store.js';
import type { RefusalReason } from './refusal.js';
import type { VelocityLimits } from './sms-rules.js';

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

export interface CountedCode {
  /** The client address's keyed hash; null when there is no address (nothing to count). */
  readonly addressHash: string | null;
  /** The keyed hash of a native IPv6 client's /48; null when not counted. */
  readonly siteHash: string | null;
  readonly range: string;
  readonly country: string | null;
  readonly at: Date;
}

/** True when some limit counts per country (numbers must then be read with the metadata). */
export function countsCountries(limits: VelocityLimits): boolean {
  return limits.countryDaily !== null;
}

/** The code's counters; those of a reason in `monitored` only watch (monitor mode). */
export function countersFor(
  limits: VelocityLimits,
  monitored: ReadonlySet<RefusalReason>,
  code: CountedCode,
): CounterLimit[] {
  const t = code.at.getTime();
  const hour = Math.floor(t / HOUR_MS);
  const day = Math.floor(t / DAY_MS);
  const hourEnd = new Date((hour + 1) * HOUR_MS);
  const dayEnd = new Date((day + 1) * DAY_MS);
  const counters: CounterLimit[] = [];
  const add = (key: string, limit: number, until: Date, reason: RefusalReason): void => {
    counters.push({ key, limit, until, reason, monitor: monitored.has(reason) });
  };
  if (limits.perAddressHour > 0 && code.addressHash !== null)
    add(`a:${code.addressHash}:h${hour}`, limits.perAddressHour, hourEnd, 'address');
  if (limits.perIpv6SiteHour > 0 && code.siteHash !== null)
    add(`s:${code.siteHash}:h${hour}`, limits.perIpv6SiteHour, hourEnd, 'address');
  if (limits.perRangeHour > 0) add(`r:${code.range}:h${hour}`, limits.perRangeHour, hourEnd, 'range');
  const countryLimit = countryLimitOf(limits, code.country);
  if (countryLimit !== null) add(`c:${code.country ?? '??'}:d${day}`, countryLimit, dayEnd, 'country-daily');
  if (limits.hourlyBudget > 0) add(`b:h${hour}`, limits.hourlyBudget, hourEnd, 'budget-hourly');
  if (limits.dailyBudget > 0) add(`b:d${day}`, limits.dailyBudget, dayEnd, 'budget-daily');
  return counters;
}

/** A country's daily limit: its own, else `*`'s (numbers of no known country too); 0 or none: no limit. */
function countryLimitOf(limits: VelocityLimits, country: string | null): number | null {
  const rule = limits.countryDaily;
  if (rule === null) return null;
  const n = (country === null ? undefined : rule.byCountry.get(country)) ?? rule.other;
  return n === null || n === 0 ? null : n;
}
