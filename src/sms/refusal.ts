/**
 * Why AuthCode refuses a code, and what the caller is told: the path the hourly limit takes
 * (a SOAP client fault, or GET/POST's 500 text), with when to try again and nothing about other
 * callers (a limit another caller filled reads as "this phone, right now").
 */
import { QuotaExceededError } from '../errors/errors.js';
import type { NumberType } from './number-types.js';

/** Every reason, as the metric and `sis outbox stats` name them. */
export const REFUSAL_REASONS = [
  'invalid',
  'number-type',
  'country',
  'blocked-range',
  'phone-hourly',
  'phone-backoff',
  'address',
  'range',
  'country-daily',
  'budget-hourly',
  'budget-daily',
  'test-hourly',
] as const;
export type RefusalReason = (typeof REFUSAL_REASONS)[number];

/** The layers as SIS_SMS_GUARD names them, each with the reasons it refuses for. */
export const GUARD_LAYERS: ReadonlyMap<string, readonly RefusalReason[]> = new Map([
  ['number', ['invalid', 'number-type', 'country']],
  ['blocked-range', ['blocked-range']],
  ['address', ['address']],
  ['range', ['range']],
  ['country-daily', ['country-daily']],
  ['budget', ['budget-hourly', 'budget-daily']],
  ['phone', ['phone-hourly', 'phone-backoff']],
]);

/**
 * The operator's brakes: a bare `monitor` (SIS_SMS_GUARD's rollout step) leaves them enforced, and
 * only `layer=monitor` naming one watches it. A block, the premium-rate refusal and the budget are
 * set by an operator to stop money going out; a rollout step that watches the new limits must not
 * lift them.
 */
export const BRAKE_LAYERS: readonly string[] = ['number', 'blocked-range', 'budget'];

/** The layers whose every reason is in `monitored` or some of them: those not fully enforced. */
export function watchedLayers(monitored: ReadonlySet<RefusalReason>): string[] {
  return [...GUARD_LAYERS].filter(([, reasons]) => reasons.some((r) => monitored.has(r))).map(([layer]) => layer);
}

export class AuthCodeRefusedError extends QuotaExceededError {
  constructor(
    readonly reason: RefusalReason,
    message: string,
  ) {
    super(message);
    this.name = 'AuthCodeRefusedError';
  }
}

export interface RefusalFacts {
  /** Seconds until a code may be accepted again; null: not by waiting. */
  readonly retryAfterSeconds: number | null;
  /** The phone's hourly limit (its refusal names it, as it always has). */
  readonly maxPerHour: number;
  readonly type?: NumberType;
}

/** The caller's message for a refusal. */
export function refusalMessage(reason: RefusalReason, facts: RefusalFacts): string {
  const wait =
    facts.retryAfterSeconds === null ? 'Try again later.' : `Try again in ${duration(facts.retryAfterSeconds)}.`;
  switch (reason) {
    case 'invalid':
      return 'Invalid phone: not a valid phone number. Send the number with its country code (+ and digits).';
    case 'number-type':
      return `This phone cannot receive codes: ${facts.type ?? 'such'} numbers are not accepted. Use a mobile number.`;
    case 'country':
      return 'This phone cannot receive codes: codes are not sent to its country. Use a mobile number of a country the service sends to, with its country code.';
    case 'phone-hourly':
      return `Too many codes for this phone: at most ${facts.maxPerHour} an hour. ${wait}`;
    case 'phone-backoff':
      return `Too many codes for this phone today: each next one waits longer. ${wait}`;
    case 'address':
      return `Too many codes asked from this address. ${wait}`;
    default:
      // Range, country, budget and blocks are filled by others too: the caller is told only to wait.
      return `Codes cannot be sent to this phone right now. ${wait}`;
  }
}

/** `1 minute`, `45 minutes`, `3 hours` (rounded up). */
export function duration(seconds: number): string {
  const minutes = Math.max(1, Math.ceil(seconds / 60));
  if (minutes <= 90) return `${minutes} minute${minutes === 1 ? '' : 's'}`;
  const hours = Math.ceil(minutes / 60);
  return `${hours} hours`;
}
