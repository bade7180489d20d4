/**
 * A school's students: the whole list at once, or page by page from one snapshot for answers
 * too large to hold (see Store.studentsOfSchoolPages). Rows are read as arrays of the three
 * columns an answer needs besides the two the query matches on, which are the arguments' text.
 */
import { CompiledQuery } from 'kysely';
import type { Kysely } from 'kysely';
import type { Database } from '../schema/tables.js';
import type { StudentRecord } from '../store.js';
import type { SnapshotRead } from './engine-parts.js';
import type { Slots } from './slots.js';

/** id_student, fullName, id_device, seq: the columns every list query selects, in this order. */
type StudentRow = readonly unknown[];

export interface ListReads {
  /** A read on the shared connection (SQLite) or pool (PostgreSQL), rows as arrays. */
  readonly read: (query: CompiledQuery) => Promise<ReadonlyArray<StudentRow>>;
  /** Opens a snapshot read on a connection of its own; null where there is none (SQLite :memory:). */
  readonly snapshot: (() => Promise<SnapshotRead>) | null;
  /** Bounds the snapshot reads open at once. */
  readonly slots: Slots;
}

/** Below every seq: the first page's keyset bound. */
const BEFORE_FIRST = Number.MIN_SAFE_INTEGER;

export class StudentLists {
  readonly #reads: ListReads;
  readonly #all: string;
  readonly #first: string;
  readonly #page: string;

  constructor(db: Kysely<Database>, reads: ListReads) {
    this.#reads = reads;
    const base = db
      .selectFrom('students')
      .select(['id_student', 'fullName', 'id_device', 'seq'])
      .where('school_base_url', '=', '')
      .where('ShowActive', '=', '');
    // Compiled once: per request only the parameters change.
    this.#all = base.orderBy('seq').compile().sql;
    this.#first = base.orderBy('seq').limit(0).compile().sql;
    this.#page = base.where('seq', '>', 0).orderBy('seq').limit(0).compile().sql;
  }

  async all(school: string, showActive: string): Promise<readonly StudentRecord[]> {
    return records(await this.#reads.read(CompiledQuery.raw(this.#all, [school, showActive])), school, showActive);
  }

  /**
   * Pages of `pageSize` students (the last one shorter). A list that fits in one page is read
   * once on the shared connection, as `all` does. A longer one is read again from the start in a
   * snapshot, whose connection is held until the iteration ends or is stopped (`return()`).
   */
  async *pages(
    school: string,
    showActive: string,
    pageSize: number,
  ): AsyncGenerator<readonly StudentRecord[], void, undefined> {
    const size = Math.max(1, Math.floor(pageSize));
    const probe = await this.#reads.read(CompiledQuery.raw(this.#first, [school, showActive, size + 1]));
    if (probe.length <= size) {
      if (probe.length > 0) yield records(probe, school, showActive);
      return;
    }
    const open = this.#reads.snapshot;
    if (open === null) {
      // No second connection (an in-memory database): one read, handed out in pages.
      const all = await this.all(school, showActive);
      for (let i = 0; i < all.length; i += size) yield all.slice(i, i + size);
      return;
    }
    const release = await this.#reads.slots.take();
    let snapshot: SnapshotRead | null = null;
    try {
      snapshot = await open();
      let after: unknown = BEFORE_FIRST;
      for (;;) {
        const rows = await snapshot.rows(CompiledQuery.raw(this.#page, [school, showActive, after, size]));
        if (rows.length > 0) yield records(rows, school, showActive);
        if (rows.length < size) return;
        after = rows[rows.length - 1]![3];
      }
    } finally {
      await snapshot?.end();
      release();
    }
  }
}

/** Rows to records. ShowActive and school_base_url equal the arguments: the query matched them with `=`. */
function records(rows: ReadonlyArray<StudentRow>, school: string, showActive: string): StudentRecord[] {
  const out: StudentRecord[] = new Array<StudentRecord>(rows.length);
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i]!;
    out[i] = {
      id_student: row[0] as string,
      fullName: row[1] as string | null,
      id_device: row[2] as string | null,
      ShowActive: showActive,
      school_base_url: school,
    };
  }
  return out;
}
