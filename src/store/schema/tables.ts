/**
 * Kysely table types: the one description of the tables both dialects share.
 * Column names keep the wire's spelling (fullName, ShowActive) so rows map to records without renaming.
 */
import type { Generated } from 'kysely';

export interface StudentsTable {
  id_student: string;
  fullName: string | null;
  id_device: string | null;
  ShowActive: string | null;
  school_base_url: string | null;
  /** Position of the first import; upserts leave it alone so answers keep the original order. */
  seq: number;
}

export interface DevicesTable {
  id: string;
  token: string | null;
}

export interface AuthCodesTable {
  id: Generated<number>;
  code: string | null;
  phone: string | null;
  /** ISO 8601 in UTC; a timestamptz column on PostgreSQL, text on SQLite. */
  created_at: string;
  /** The phone's ISO 3166 country when it could be told (migration 7). */
  country?: string | null;
  /** 1: a code to one of SIS_SMS_TEST_NUMBERS, never sent nor counted (migration 8). */
  test?: Generated<number>;
}

export interface MarksTable {
  id_student: string;
  SubjectID: string;
  SubjectName: string | null;
  Mark: string | null;
  Term: string | null;
  MarkDate: string | null;
  Note: string | null;
  /** Import position: answers list a student's marks in this order. */
  seq: number;
}

export interface PushSettingsTable {
  /** Always 1: the table holds one row at most. */
  id: number;
  ServerKey: string | null;
  SenderId: string | null;
}

/** Timestamps: timestamptz on PostgreSQL (read back as Date), ISO 8601 text in UTC on SQLite. */
type Timestamp = string | Date;

export interface OutboxTable {
  id: Generated<number>;
  /** The normalized phone (optional + and digits). */
  phone: string;
  code: string;
  /** The SMS text, the code included. */
  message: string;
  /** pending, delivered or failed. */
  state: string;
  attempts: number;
  next_attempt_at: Timestamp;
  last_error: string | null;
  created_at: Timestamp;
  delivered_at: Timestamp | null;
  /** The worker holding the lease, and until when; a lease that ran out may be taken again. */
  locked_by: string | null;
  locked_until: Timestamp | null;
  /** The phone's country and range, kept for delivery rates after the phone is masked (migration 8). */
  country?: string | null;
  phone_range?: string | null;
  /** What the gateway's signed receipt said: delivered, failed or undelivered, its reason and time. */
  receipt?: string | null;
  receipt_reason?: string | null;
  receipt_at?: Timestamp | null;
  /** The W3C traceparent the webhook POST carries: the request's trace (migration 10), or null. */
  traceparent?: string | null;
  /** The gateway that accepted the message (SIS_SMS_GATEWAY's name) and its id there (migration 11). */
  gateway?: string | null;
  gateway_message_id?: string | null;
}

/** Rows pruned so far per table: the sum over its slots, each counted in the deleting transaction. */
export interface PrunedRowsTable {
  table_name: string;
  slot: number;
  /** bigint on PostgreSQL: read back as a string. */
  pruned: number | string;
}

export interface MigrationsTable {
  version: number;
  name: string;
  applied_at: string;
}

/** PostgreSQL only: a counter per table that a trigger moves with every statement writing the table. */
export interface DataVersionsTable {
  name: string;
  /** bigint: read back as a string. */
  version: number | string;
}

/** Migration 7 (docs/sms.md): counters of the velocity limits, when no Redis counts them. */
export interface SmsCountersTable {
  counter: string;
  /** bigint on PostgreSQL: read back as a string. */
  hits: number | string;
  /** The end of the counter's window: deleted afterwards. */
  expires_at: Timestamp;
}

/** Refused codes per ten minutes, reason, country ('' unknown) and range: for `sis outbox stats`. */
export interface SmsRefusalsTable {
  period_start: Timestamp;
  reason: string;
  country: string;
  phone_range: string;
  refused: number | string;
}

/** Ranges an operator stopped (`sis sms block-range`); null `blocked_until`: until allowed again. */
export interface SmsBlockedRangesTable {
  phone_range: string;
  blocked_until: Timestamp | null;
  created_at: Timestamp;
}

/** Keys made once per database: `address-hash` keys the hashes client addresses are counted under. */
export interface SmsKeysTable {
  name: string;
  value: string;
}

/** Comparisons beside the legacy service, per minute (`bucket`, ISO 8601) and group; '' for none. */
export interface ShadowCountsTable {
  bucket: string;
  service: string;
  operation: string;
  binding: string;
  /** The mode it was taken in (legacy, compare); '' for counts from before modes were kept. */
  mode: string;
  result: string;
  /** The kind of difference (a digest of its paths) for `different` and `noisy`; '' otherwise. */
  kind: string;
  /** bigint on PostgreSQL: read back as a string. */
  count: number | string;
}

/** Kept differences: one JSON example each (request, both answers, differing paths), personal data masked. */
export interface ShadowDifferencesTable {
  id: Generated<number>;
  created_at: Timestamp;
  service: string;
  operation: string;
  binding: string;
  kind: string;
  example: string;
}

/** Accepted differences (`sis shadow accept`): a kind or a path pattern ('' where not given). */
export interface ShadowRulesTable {
  id: Generated<number>;
  created_at: Timestamp;
  kind: string;
  path: string;
  service: string;
  operation: string;
  binding: string;
  note: string;
  /** bigint on PostgreSQL: read back as a string. */
  hits: number | string;
}

export interface Database {
  students: StudentsTable;
  devices: DevicesTable;
  auth_codes: AuthCodesTable;
  marks: MarksTable;
  push_settings: PushSettingsTable;
  outbox: OutboxTable;
  pruned_rows: PrunedRowsTable;
  sms_counters: SmsCountersTable;
  sms_refusals: SmsRefusalsTable;
  sms_blocked_ranges: SmsBlockedRangesTable;
  sms_keys: SmsKeysTable;
  sis_migrations: MigrationsTable;
  sis_data_versions: DataVersionsTable;
  shadow_counts: ShadowCountsTable;
  shadow_differences: ShadowDifferencesTable;
  shadow_rules: ShadowRulesTable;
}
