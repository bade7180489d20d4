/**
 * The store: what operations need from the database, and what the admin tools need to load it.
 * It knows nothing of XML or HTTP; SQLite and PostgreSQL implement it behind one query layer.
 */

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

/** The import format (see schema/dataset.schema.json). */
export interface Dataset {
  readonly students?: readonly StudentRecord[];
  readonly devices?: readonly DeviceRecord[];
}

export interface ImportOptions {
  /** Empty the tables first, in the same transaction. */
  readonly replace?: boolean;
}

export interface ImportReport {
  readonly students: number;
  readonly devices: number;
}

export interface Store {
  /** Students of a school whose ShowActive equals `showActive`, in the order they were first imported. */
  studentsOfSchool(schoolBaseUrl: string, showActive: string): Promise<readonly StudentRecord[]>;
  /** The token stored for a device identifier, or null when there is none. */
  deviceToken(id: string): Promise<string | null>;
  /** Records an authentication code request with its time. */
  recordAuthCode(code: string | null, phone: string | null, at: Date): Promise<void>;
  /** Loads a validated dataset in one transaction (all or nothing), upserting by key. */
  importDataset(dataset: Dataset, options?: ImportOptions): Promise<ImportReport>;
  /** True when no student and no device is stored (the first start loads demo data then). */
  isEmpty(): Promise<boolean>;
  /** Resolves when the database answers. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
