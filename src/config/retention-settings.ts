/**
 * How long personal data is kept (SIS_AUTH_CODE_RETENTION_MS, SIS_OUTBOX_RETENTION_MS): the
 * values and the one rule between them and the hourly limit. The pruner (src/retention/pruner.ts)
 * applies them.
 */
import { AUTH_CODE_WINDOW_MS } from '../store/auth-code-window.js';

/** Milliseconds; 0 keeps forever. */
export interface RetentionSettings {
  /** Accepted codes (auth_codes). Never under the hour the per-phone limit counts in, while it is on. */
  readonly authCodesMs: number;
  /** Delivered and failed messages (outbox); pending ones are never removed. */
  readonly outboxMs: number;
}

const DAY_MS = 86_400_000;
/** Ten years: more is a typo (0 keeps forever). */
export const MAX_RETENTION_MS = 3650 * DAY_MS;

/** A code pruned inside the hour would no longer count against its phone: refused at start. */
export function checkRetention(retention: RetentionSettings, authCodesPerHour: number, problems: string[]): void {
  const keptMs = retention.authCodesMs;
  if (authCodesPerHour > 0 && keptMs > 0 && keptMs < AUTH_CODE_WINDOW_MS) {
    problems.push(
      `SIS_AUTH_CODE_RETENTION_MS=${keptMs}: expected at least ${AUTH_CODE_WINDOW_MS} (one hour) while SIS_AUTH_CODES_PER_HOUR is on, or the hourly limit would forget codes it must count; use 0 to keep codes forever, or set SIS_AUTH_CODES_PER_HOUR=0`,
    );
  }
}
