/**
 * What the SMS protection tests share: AuthCode asked over HTTP GET as a client behind the
 * trusted proxy (127.0.0.1) with its own X-Forwarded-For, the refusal counts a service reports,
 * the backends (SQLite, PostgreSQL, Redis) and a clock fixed inside one clock hour.
 */
import type { FreshDatabase } from './store-targets.js';
import { POSTGRES_SKIP, postgresTarget, sqliteTarget } from './store-targets.js';

export const REDIS_URL = process.env['SIS_TEST_REDIS_URL'] ?? '';

/** The protection's defaults (an empty value reads as the settings table's default), the SMS_PROTECTION_OFF of other tests undone. */
export const SMS_DEFAULTS: Readonly<Record<string, string>> = {
  SIS_SMS_REFUSE_TYPES: '',
  SIS_AUTH_CODE_BACKOFF: '',
  SIS_AUTH_CODES_PER_ADDRESS_HOUR: '',
  SIS_AUTH_CODES_PER_IPV6_48_HOUR: '',
  SIS_AUTH_CODES_PER_RANGE_HOUR: '',
  SIS_SMS_COUNTRY_DAILY_LIMITS: '',
  SIS_TRUSTED_PROXIES: '127.0.0.1',
  SIS_SMS_DEFAULT_REGION: 'SA',
};

export interface Backend {
  readonly name: string;
  readonly skip: string | null;
  /** A fresh database, and the settings that select it (and Redis). */
  fresh(): Promise<{ db: FreshDatabase; env: Record<string, string> }>;
}

export const backends: readonly Backend[] = [
  { name: 'SQLite', skip: null, fresh: () => fresh(sqliteTarget.fresh(), {}) },
  { name: 'PostgreSQL', skip: POSTGRES_SKIP, fresh: () => fresh(postgresTarget.fresh(), {}) },
  {
    name: 'SQLite with Redis',
    skip: REDIS_URL === '' ? 'SIS_TEST_REDIS_URL not set: Redis tests skipped' : null,
    fresh: () => fresh(sqliteTarget.fresh(), { SIS_REDIS_URL: REDIS_URL }),
  },
];

/** The backends and PostgreSQL with Redis: the protection's new rules are held on every combination. */
export const everyBackend: readonly Backend[] = [
  ...backends,
  {
    name: 'PostgreSQL with Redis',
    skip: POSTGRES_SKIP ?? (REDIS_URL === '' ? 'SIS_TEST_REDIS_URL not set: Redis tests skipped' : null),
    fresh: () => fresh(postgresTarget.fresh(), { SIS_REDIS_URL: REDIS_URL }),
  },
];

async function fresh(
  database: Promise<FreshDatabase>,
  env: Record<string, string>,
): Promise<{ db: FreshDatabase; env: Record<string, string> }> {
  const db = await database;
  return { db, env: { SIS_DATABASE_URL: db.url, ...env } };
}

/** The middle of the current clock hour: every code of a test counts in one hour's counters. */
export function midHour(): () => Date {
  const at = new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000 + 1_800_000);
  return () => at;
}

export interface Answer {
  readonly status: number;
  /** The text of GET's answer (the refusal's message, or the empty result). */
  readonly text: string;
}

let codes = 0;

/** A new six-digit code, as an app makes one for each sign-in (the same code again is a retry: SIS_AUTH_CODE_REPEAT_MS). */
export function freshCode(): string {
  return String(100_000 + (codes++ % 900_000));
}

/** AuthCode over HTTP GET from `address` (forwarded by the trusted proxy); a new code unless `code` is given. */
export async function authCode(url: string, phone: string, address: string, code = freshCode()): Promise<Answer> {
  const query = `code=${encodeURIComponent(code)}&phone=${encodeURIComponent(phone)}`;
  const res = await fetch(`${url}/AuthCodeSending.asmx/AuthCode?${query}`, {
    headers: { 'x-forwarded-for': address },
  });
  return { status: res.status, text: (await res.text()).trimEnd() };
}

/** Runs `work` over `items`, `width` at a time. */
export async function inParallel<T>(
  items: readonly T[],
  width: number,
  work: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: width }, lane));
}

/** sis_auth_code_refusals_total by reason, as the service's /metrics tells it. */
export async function refusals(url: string): Promise<Map<string, number>> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const counts = new Map<string, number>();
  for (const m of text.matchAll(/^sis_auth_code_refusals_total\{reason="([^"]+)"\} (\d+)$/gm))
    counts.set(m[1]!, Number(m[2]));
  return counts;
}

/** sis_sms_queued_total by country. */
export async function queued(url: string): Promise<Map<string, number>> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const counts = new Map<string, number>();
  for (const m of text.matchAll(/^sis_sms_queued_total\{country="([^"]+)"\} (\d+)$/gm)) counts.set(m[1]!, Number(m[2]));
  return counts;
}

/** Valid Saudi mobiles (05X XXX XXXX), none in `avoid`'s range, drawn from a fixed seed. */
export function saudiMobiles(n: number, seed: number, avoidRange: string): string[] {
  const prefixes = ['50', '53', '54', '55', '56', '58', '59'];
  let s = seed;
  const next = (): number => (s = (Math.imul(s, 1103515245) + 12345) >>> 0);
  const out = new Set<string>();
  while (out.size < n) {
    const national = `${prefixes[next() % prefixes.length]}${String(next() % 10_000_000).padStart(7, '0')}`;
    if (!`+966${national}`.startsWith(avoidRange)) out.add(national);
  }
  return [...out];
}
