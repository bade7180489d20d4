/**
 * What AuthCode's SMS protection keeps in the database (migration 7; docs/sms.md): refused
 * codes counted for `sis outbox stats`, ranges an operator stopped, and the key client
 * addresses are hashed with. The velocity counters themselves are taken in AuthCode's own
 * transaction (store.ts, CounterLimit), and first in Redis when one counts them.
 */

/** Refused codes of one ten-minute period, reason, country ('' unknown) and range. */
export interface RefusalCount {
  readonly periodStart: Date;
  /** A refusal's reason; a would-be refusal of monitor mode (accepted) as MONITOR_PREFIX + reason. */
  readonly reason: string;
  readonly country: string;
  readonly range: string;
  readonly refused: number;
}

export interface BlockedRange {
  /** A prefix of the phone as stored: `+` and digits. */
  readonly range: string;
  /** null: until allowed again. */
  readonly until: Date | null;
  readonly createdAt: Date;
}

/** Codes asked (accepted and refused) per key, the busiest first. */
export type Busiest = readonly (readonly [string, number])[];

export interface SmsStats {
  /** Refused codes by reason. */
  readonly refusedHour: ReadonlyMap<string, number>;
  readonly refusedDay: ReadonlyMap<string, number>;
  readonly rangesHour: Busiest;
  readonly rangesDay: Busiest;
  readonly countriesHour: Busiest;
  readonly countriesDay: Busiest;
}

export interface SmsStore {
  /** The database's key for hashing client addresses (made by migration 7). */
  smsAddressKey(): Promise<string>;
  /** Adds refused codes to their periods' counts. */
  addSmsRefusals(rows: readonly RefusalCount[]): Promise<void>;
  /** The ranges stopped now (those whose end has passed left out). */
  blockedRanges(now: Date): Promise<readonly BlockedRange[]>;
  /** Stops codes to numbers starting with `range` until `until` (null: until allowed again); replaces an earlier block. */
  blockRange(range: string, until: Date | null, now: Date): Promise<void>;
  /** Lifts a block; false when there was none. */
  allowRange(range: string): Promise<boolean>;
  /** Deletes counters whose window ended, refusal counts older than two days and blocks that ended. */
  sweepSms(now: Date): Promise<void>;
  /** Refusals by reason, the busiest ranges and countries, of the last hour and day. */
  smsStats(now: Date, top: number): Promise<SmsStats>;
}

/** Refusal counts are kept this long (two days: `sis outbox stats` shows one). */
export const REFUSALS_KEPT_MS = 2 * 86_400_000;
/** How a would-be refusal (monitor mode) is named among the counts (`sis outbox stats`). */
export const MONITOR_PREFIX = 'monitor:';
/** The period refused codes are counted in. */
export const REFUSAL_PERIOD_MS = 600_000;

export function periodStart(at: Date): Date {
  return new Date(Math.floor(at.getTime() / REFUSAL_PERIOD_MS) * REFUSAL_PERIOD_MS);
}
