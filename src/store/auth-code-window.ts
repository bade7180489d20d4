/**
 * The per-phone hourly limit, shared by both AuthCode writes (Kysely's and SQLite's synchronous
 * one): the window a code counts in, and what a refusal answers.
 */
import type { AuthCodeOutcome } from './store.js';

/** The window a code counts in; retention may never be shorter while the limit is on. */
export const AUTH_CODE_WINDOW_MS = 3_600_000;
const HOUR_MS = AUTH_CODE_WINDOW_MS;

/** The oldest `created_at` that still counts against a code asked for at `at`. */
export function windowStart(at: Date): string {
  return new Date(at.getTime() - HOUR_MS).toISOString();
}

/** The refusal when the limiting code (the maxPerHour-th newest of the window) was made at `limitingCreatedAt`. */
export function refusal(limitingCreatedAt: string, at: Date): AuthCodeOutcome {
  const freeAt = new Date(limitingCreatedAt).getTime() + HOUR_MS;
  return { accepted: false, retryAfterSeconds: Math.max(1, Math.ceil((freeAt - at.getTime()) / 1000)) };
}
