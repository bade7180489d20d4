/**
 * The store: what operations need from the database, and what the admin tools need to load it.
 * It knows nothing of XML or HTTP; SQLite and PostgreSQL implement it behind one query layer.
 */
import type { OutboxStore } from './outbox-types.js';
import type { RetentionStore } from './retention-types.js';
import type { ShadowStore } from './shadow-types.js';

/** A student as stored (a type, not an interface, so it is a StructValue). Every field but the key may be null, which answers leave out. */
export type StudentRecord = {
  readonly id_student: string;
  readonly fullName: string | null;
  readonly id_device: string | null;
  readonly ShowActive: string | null;
  readonly school_base_url: string | null;
};

export type DeviceRecord = {
  readonly id: string;
  readonly token: string | null;
};

/** One mark of a student, fields as the extended GetStudentsMarks answers them (null ones left out). */
export type MarkRecord = {
  readonly id_student: string;
  readonly SubjectID: string;
  readonly SubjectName: string | null;
  readonly Mark: string | null;
  readonly Term: string | null;
  readonly MarkDate: string | null;
  readonly Note: string | null;
};

/** What the sender of push notifications needs; one set per database. */
export type PushSettingsRecord = {
  readonly ServerKey: string | null;
  readonly SenderId: string | null;
};

/** The import format (see schema/dataset.schema.json). */
export interface Dataset {
  readonly students?: readonly StudentRecord[];
  readonly devices?: readonly DeviceRecord[];
  /** A student named here has exactly these marks afterwards, in this order (see importDataset). */
  readonly marks?: readonly MarkRecord[];
  /** Replaces the stored push settings. */
  readonly push?: PushSettingsRecord;
}

export interface ImportOptions {
  /** Empty the tables first, in the same transaction: students and devices, marks and push when the dataset has them. */
  readonly replace?: boolean;
}

export interface ImportReport {
  readonly students: number;
  readonly devices: number;
  readonly marks: number;
  /** 1 when the push settings were written, else 0. */
  readonly push: number;
}

/** An AuthCode request that passed validation: the phone in its normal form, the SMS text ready. */
export interface AuthCodeRequest {
  readonly code: string;
  readonly phone: string;
  readonly at: Date;
  readonly message: string;
  /** Most codes one phone may get within an hour, this one included; 0: no limit. */
  readonly maxPerHour: number;
  /** After the hourly limit, each next code waits longer since the last (auth-code-window.ts). */
  readonly backoff?: boolean;
  /** The phone's ISO 3166 country, or null when it cannot be told (kept with the code, for `sis outbox stats`). */
  readonly country?: string | null;
  /** Limits counted in the database, in this order, in the code's own transaction (sms-types.ts). */
  readonly counters?: readonly CounterLimit[];
  /**
   * Redis already found none of `counters` full: the transaction counts them (and refuses past a
   * limit) without a look at them first. The database counts every accepted code either way.
   */
  readonly countersChecked?: boolean;
  /** The phone's range, kept with its message for delivery rates (the phone itself is masked once delivered). */
  readonly range?: string;
  /** The same code for this phone within this many ms is a repeat: accepted, nothing written or counted. */
  readonly repeatMs?: number;
  /** The per-phone limits only watch: a would-be refusal is told in the outcome, the code accepted. */
  readonly monitorPhone?: boolean;
  /** A code to a test number: recorded as a test code; no limit, counter or message. */
  readonly test?: boolean;
  /** The W3C traceparent the message's delivery carries (kept with it); absent: none. */
  readonly traceparent?: string | undefined;
  /** Every check, and nothing written: the outcome says whether the code would be accepted now. */
  readonly dryRun?: boolean;
}

/** One limit counted in the database (and in Redis first, when one counts): a counter of a window, shared by every instance. */
export interface CounterLimit {
  /** The counter, its window in the name (`r:+96650123:h482113`). */
  readonly key: string;
  /** Most codes it may count. */
  readonly limit: number;
  /** The end of its window: the counter may be deleted then, and a refusal says to try again then. */
  readonly until: Date;
  /** Why a code is refused when this counter is full. */
  readonly reason: string;
  /** Only watched (monitor mode): counted, and past its limit told in the outcome, never refused. */
  readonly monitor?: boolean;
}

/** Why the store refused a code: the phone's hourly limit, its growing wait, or a full counter's reason. */
export type AuthCodeOutcome =
  | {
      readonly accepted: true;
      /** The same code to the same phone was accepted moments ago: nothing written this time. */
      readonly repeat?: boolean;
      /** Reasons a watched limit (monitor mode) would have refused the code for. */
      readonly monitored?: readonly string[];
    }
  | {
      readonly accepted: false;
      readonly retryAfterSeconds: number;
      readonly reason: string;
      /** The full counter's key, when a counter refused the code (CounterLimit.key). */
      readonly counter?: string;
    };

export interface Store {
  /** Students of a school whose ShowActive equals `showActive`, in the order they were first imported. */
  studentsOfSchool(schoolBaseUrl: string, showActive: string): Promise<readonly StudentRecord[]>;
  /**
   * The same students in pages of `pageSize` (the last one shorter), all from one consistent
   * state of the database: an import committed while the pages are read changes none of them.
   * A list longer than one page holds a connection until the iteration ends or is stopped
   * (`break`, `return()`), so memory stays bounded however large the school. Errors surface from
   * the iteration.
   */
  studentsOfSchoolPages(
    schoolBaseUrl: string,
    showActive: string,
    pageSize: number,
  ): AsyncIterable<readonly StudentRecord[]>;
  /**
   * The token stored for a device identifier, or null when there is none. SQLite answers at once
   * (no promise: the hot path's lookup costs no microtask hops); PostgreSQL with a promise.
   */
  deviceToken(id: string): string | null | Promise<string | null>;
  /** A student's marks for one subject, or all subjects when `subjectId` is null, in import order. */
  marksOf(studentId: string, subjectId: string | null): Promise<readonly MarkRecord[]>;
  /** The stored push settings, or null when none were imported. */
  pushSettings(): Promise<PushSettingsRecord | null>;
  /**
   * Stores the code and queues its SMS in one transaction, unless the phone already had
   * `maxPerHour` codes within the hour before `at` (counted under a per-phone lock).
   */
  acceptAuthCode(request: AuthCodeRequest): Promise<AuthCodeOutcome>;
  /** Records a code request with its time, without sending anything (tools and benchmarks). */
  recordAuthCode(code: string | null, phone: string | null, at: Date): Promise<void>;
  /**
   * Loads a validated dataset in one transaction (all or nothing): students and devices upserted
   * by key; the marks of each student the dataset names replace that student's stored marks.
   */
  importDataset(dataset: Dataset, options?: ImportOptions): Promise<ImportReport>;
  /** True when no student and no device is stored (the first start loads demo data then). */
  isEmpty(): Promise<boolean>;
  /**
   * A token that changes whenever the data cached answers are made of (the students) may have
   * changed, whoever committed it (another process, another instance, this store): a token never
   * comes back once it has moved. Answers read after a token are at least as new as the token.
   * Cheap: SQLite answers synchronously (`data_version` and the connection's change count);
   * PostgreSQL with one primary-key lookup (a counter a trigger moves in every writer's
   * transaction), hence the promise. Null, or a rejection, when the store cannot tell now.
   */
  dataVersion?(): string | null | Promise<string | null>;
  /** Resolves when the database answers. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The store one running service needs: the operations' Store, the outbox its delivery worker
 * drains and the retention its pruner runs (an opened store, or one opening in the background).
 */
export interface ServiceStore extends Store, OutboxStore {
  readonly retention: RetentionStore;
  /** What is kept of the comparisons beside the legacy service (src/shadow). */
  readonly shadow: ShadowStore;
}
