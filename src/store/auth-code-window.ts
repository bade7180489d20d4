/**
 * The per-phone limits, shared by both AuthCode writes (Kysely's and SQLite's synchronous one):
 * the hourly window a code counts in, the growing wait after the limit (Auth0's scheme: one minute,
 * doubling up to 32, with jitter; refused codes count in it), a repeat of a code just accepted
 * (answered without a second message, but only where a new code would be accepted too, so the
 * answer never tells whether a code was the phone's), and what a refusal answers.
 */
import type { AuthCodeOutcome, AuthCodeRequest, CounterLimit } from './store.js';

/** The window a code counts in; retention may never be shorter while the limit is on. */
export const AUTH_CODE_WINDOW_MS = 3_600_000;
const HOUR_MS = AUTH_CODE_WINDOW_MS;
/** The growing wait looks back this far: a phone's history over a day decides its wait. */
export const BACKOFF_LOOKBACK_MS = 86_400_000;
const FIRST_WAIT_MS = 60_000;
const LONGEST_WAIT_MS = 32 * 60_000;

/** The oldest `created_at` that still counts against a code asked for at `at`. */
export function windowStart(at: Date): string {
  return new Date(at.getTime() - HOUR_MS).toISOString();
}

/** A code accepted (the outcome both writes share). */
export const ACCEPTED: AuthCodeOutcome = { accepted: true };

/** The same code to the same phone again: accepted, and nothing written or counted. */
export const REPEAT: AuthCodeOutcome = { accepted: true, repeat: true };

/** One of the phone's recent codes, as the phone checks read them (newest first). */
export interface RecentCode {
  readonly created_at: string | Date;
  readonly code: string | null;
}

/**
 * The hourly limit: refused when the maxPerHour-th newest code of the hour is still in the
 * window, whatever the code (a repeat included: at the limit, "accepted" for the phone's own
 * recent code and "refused" for every other one would tell a guesser which code the phone got).
 * `recent`: the phone's codes of the hour, newest first, at most maxPerHour of them.
 */
export function hourlyRefusal(recent: readonly RecentCode[], request: AuthCodeRequest): AuthCodeOutcome | null {
  const max = request.maxPerHour;
  return max > 0 && recent.length >= max ? refusal(recent[max - 1]!.created_at, request.at) : null;
}

/** Whether `recent` holds this very code within `repeatMs`: asked only once no phone limit refuses the code. */
export function isRepeat(recent: readonly RecentCode[], request: AuthCodeRequest): boolean {
  const repeatMs = request.repeatMs ?? 0;
  if (repeatMs <= 0) return false;
  const since = request.at.getTime() - repeatMs;
  return recent.some((r) => r.code === request.code && new Date(r.created_at).getTime() > since);
}

/** The oldest `created_at` a repeat is looked for from. */
export function repeatStart(request: AuthCodeRequest): string {
  return new Date(request.at.getTime() - (request.repeatMs ?? 0)).toISOString();
}

/**
 * The counter (sms_counters, in the database whatever holds the other counters) of the phone's
 * refused codes: each refusal by the phone's own limits adds one and moves its end to a day after
 * that refusal, so a phone guessed at keeps growing its wait (backoffRefusal) until a quiet day.
 */
export function phoneRefusalsKey(phone: string): string {
  return `p:${phone}`;
}

/** The end a phone's refusal counter gets when a refusal at `at` is counted. */
export function phoneRefusalsUntil(at: Date): string {
  return new Date(at.getTime() + BACKOFF_LOOKBACK_MS).toISOString();
}

/** When the phone's last refusal was counted, from its counter's end (null: no counter). */
export function lastRefusalAt(expiresAt: string | Date | null | undefined): Date | null {
  return expiresAt == null ? null : new Date(new Date(expiresAt).getTime() - BACKOFF_LOOKBACK_MS);
}

/** The later of the phone's last code and last refusal: the growing wait runs from it. */
export function lastAttempt(lastCode: string | Date | null, lastRefusal: Date | null): Date | null {
  if (lastCode === null) return lastRefusal;
  const code = new Date(lastCode);
  return lastRefusal !== null && lastRefusal > code ? lastRefusal : code;
}

/** Whether an outcome is a refusal by the phone's own limits (counted against the phone and its address). */
export function isPhoneRefusal(outcome: AuthCodeOutcome): boolean {
  return !outcome.accepted && (outcome.reason === 'phone-hourly' || outcome.reason === 'phone-backoff');
}

/** The oldest `created_at` the growing wait counts. */
export function backoffStart(at: Date): string {
  return new Date(at.getTime() - BACKOFF_LOOKBACK_MS).toISOString();
}

/** The refusal when the limiting code (the maxPerHour-th newest of the window) was made at `limitingCreatedAt`. */
export function refusal(limitingCreatedAt: string | Date, at: Date): AuthCodeOutcome {
  const freeAt = new Date(limitingCreatedAt).getTime() + HOUR_MS;
  return refusedUntil(freeAt, at, 'phone-hourly');
}

/**
 * The growing wait: a phone that got `count` codes in the last day (its refused ones included),
 * at least `maxPerHour`, waits one minute after its last code (or refusal), doubled for each code beyond the limit, at most 32 minutes,
 * plus up to a quarter more (jitter derived from the phone and the count, so one phone is told
 * the same wait on every try, and phones refused together are not freed together).
 */
export function backoffRefusal(
  phone: string,
  count: number,
  lastCreatedAt: string | Date | null,
  maxPerHour: number,
  at: Date,
): AuthCodeOutcome | null {
  if (maxPerHour <= 0 || count < maxPerHour || lastCreatedAt === null) return null;
  const base = Math.min(FIRST_WAIT_MS * 2 ** Math.min(count - maxPerHour, 10), LONGEST_WAIT_MS);
  const wait = base + Math.floor(base * 0.25 * jitter(`${phone}#${count}`));
  const freeAt = new Date(lastCreatedAt).getTime() + wait;
  return freeAt > at.getTime() ? refusedUntil(freeAt, at, 'phone-backoff') : null;
}

/** The refusal by a full counter: until its window ends, naming it (Redis is told it is full: sms-guard.ts). */
export function counterRefusal(counter: CounterLimit, at: Date): AuthCodeOutcome {
  return {
    accepted: false,
    reason: counter.reason,
    retryAfterSeconds: secondsUntil(counter.until.getTime(), at),
    counter: counter.key,
  };
}

/** A refusal that ends at `freeAt` (ms), counted in whole seconds from `at`, at least one. */
export function refusedUntil(freeAt: number, at: Date, reason: string): AuthCodeOutcome {
  return { accepted: false, reason, retryAfterSeconds: secondsUntil(freeAt, at) };
}

function secondsUntil(freeAt: number, at: Date): number {
  return Math.max(1, Math.ceil((freeAt - at.getTime()) / 1000));
}

/** A number in [0, 1) from a text (FNV-1a): the same text, the same number. */
function jitter(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return (h >>> 0) / 0x1_0000_0000;
}
