/**
 * A school's students in pages (Store.studentsOfSchoolPages), looped over SQLite and PostgreSQL:
 * the same students as the whole list, one snapshot whatever imports commit meanwhile, and the
 * connection a long list holds given back however the reading ends.
 */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { BackgroundStore, StoreNotReadyError } from '../../src/store/open/background-store.js';
import { openStore } from '../../src/store/open/open-store.js';
import type { SqlStore } from '../../src/store/sql/sql-store.js';
import type { StudentRecord } from '../../src/store/store.js';
import { eventually } from '../helpers/eventually.js';
import { cleanupTargets, storeTargets, withFreshStore } from '../helpers/store-targets.js';

const SCHOOL = 'http://big.example';

/** `n` active students of SCHOOL, with inactive ones and another school's in between. */
function school(n: number, tag = 's'): StudentRecord[] {
  const out: StudentRecord[] = [];
  for (let i = 1; i <= n; i++) {
    const id = `${tag}-${String(i).padStart(6, '0')}`;
    out.push({
      id_student: id,
      fullName: i % 7 === 0 ? `O'Brien & <Sons> ${i}` : `Zoë ${i}`,
      id_device: i % 13 === 0 ? null : `dev-${i}`,
      ShowActive: '1',
      school_base_url: SCHOOL,
    });
    if (i % 10 === 0)
      out.push({
        id_student: `${id}-x`,
        fullName: 'inactive',
        id_device: null,
        ShowActive: '0',
        school_base_url: SCHOOL,
      });
    if (i % 25 === 0)
      out.push({
        id_student: `${id}-o`,
        fullName: 'other',
        id_device: null,
        ShowActive: '1',
        school_base_url: 'http://other.example',
      });
  }
  return out;
}

const active = (rows: readonly StudentRecord[]): StudentRecord[] =>
  rows.filter((s) => s.school_base_url === SCHOOL && s.ShowActive === '1');
const ids = (rows: readonly StudentRecord[]): string[] => rows.map((s) => s.id_student);

async function collect(
  pages: AsyncIterable<readonly StudentRecord[]>,
): Promise<{ rows: StudentRecord[]; sizes: number[] }> {
  const rows: StudentRecord[] = [];
  const sizes: number[] = [];
  for await (const page of pages) {
    sizes.push(page.length);
    rows.push(...page);
  }
  return { rows, sizes };
}

after(cleanupTargets);

for (const target of storeTargets) {
  describe(`student pages on ${target.name}`, { skip: target.skip ?? false }, () => {
    test('give the students of the whole list, in pages of the size asked', () =>
      withFreshStore(target, async (store) => {
        const data = school(250);
        await store.importDataset({ students: data });
        const whole = await store.studentsOfSchool(SCHOOL, '1');
        assert.deepEqual(whole, active(data));
        for (const size of [1, 7, 100, 249, 250, 251, 1000]) {
          const { rows, sizes } = await collect(store.studentsOfSchoolPages(SCHOOL, '1', size));
          assert.deepEqual(rows, whole, `pages of ${size}`);
          assert.ok(
            sizes.slice(0, -1).every((n) => n === size) && sizes.at(-1)! <= size && sizes.at(-1)! > 0,
            `pages of ${size}: ${sizes.join(',')}`,
          );
        }
        assert.deepEqual((await collect(store.studentsOfSchoolPages('http://nowhere.example', '1', 10))).sizes, []);
        assert.deepEqual(store.snapshotReads(), { open: 0, waiting: 0, connections: target.name === 'SQLite' ? 1 : 0 });
      }));

    test('a list within one page is read on the shared connection, without a snapshot', () =>
      withFreshStore(target, async (store) => {
        await store.importDataset({ students: school(30) });
        const { sizes } = await collect(store.studentsOfSchoolPages(SCHOOL, '1', 30));
        assert.deepEqual(sizes, [30]);
        assert.deepEqual(store.snapshotReads(), { open: 0, waiting: 0, connections: 0 });
      }));

    test('read one snapshot: an import --replace committed between pages changes none of them', () =>
      withFreshStore(target, async (store, db) => {
        const before = school(300, 'a');
        await store.importDataset({ students: before });
        // The replacement lists some of the same students, in another order, and new ones.
        const replaced = [
          ...school(300, 'a')
            .reverse()
            .filter((_, i) => i % 3 !== 0),
          ...school(120, 'b'),
        ];
        const other = await openStore(db.url, { poolSize: 2 });
        try {
          const pages = store.studentsOfSchoolPages(SCHOOL, '1', 50)[Symbol.asyncIterator]();
          const first = await pages.next();
          assert.equal(first.done, false);
          assert.equal(store.snapshotReads().open, 1, 'a snapshot is held between pages');
          await other.importDataset({ students: replaced }, { replace: true });
          assert.deepEqual(
            ids(await other.studentsOfSchool(SCHOOL, '1')),
            ids(active(replaced)),
            'the import is committed',
          );
          const rest: StudentRecord[] = [...(first.value ?? [])];
          for (let page = await pages.next(); page.done !== true; page = await pages.next()) rest.push(...page.value);
          assert.deepEqual(ids(rest), ids(active(before)), 'every page from the state before the import');
          assert.equal(store.snapshotReads().open, 0);
          assert.deepEqual(
            ids((await collect(store.studentsOfSchoolPages(SCHOOL, '1', 50))).rows),
            ids(active(replaced)),
          );
        } finally {
          await other.close();
        }
      }));

    test('give the connection back when the reading stops early, and keep few reader connections', () =>
      withFreshStore(target, async (store) => {
        await store.importDataset({ students: school(200) });
        for (let i = 0; i < 10; i++) {
          for await (const page of store.studentsOfSchoolPages(SCHOOL, '1', 20)) {
            assert.equal(page.length, 20);
            break;
          }
        }
        assert.equal(store.snapshotReads().open, 0);
        assert.ok(store.snapshotReads().connections <= 1, JSON.stringify(store.snapshotReads()));
        assert.equal((await collect(store.studentsOfSchoolPages(SCHOOL, '1', 20))).rows.length, 200);
      }));

    test('bound the snapshots open at once: the others wait their turn, and all are served', () =>
      withFreshStore(target, async (store) => {
        await store.importDataset({ students: school(100) });
        const readers = Array.from({ length: 8 }, () =>
          store.studentsOfSchoolPages(SCHOOL, '1', 10)[Symbol.asyncIterator](),
        );
        const firsts = readers.map((r) => r.next());
        await eventually(() => assert.equal(store.snapshotReads().open + store.snapshotReads().waiting, 8));
        const { open, waiting } = store.snapshotReads();
        // SQLite: 4 reader connections at most; PostgreSQL: half the pool (2 of the 4 here).
        assert.equal(open, target.name === 'SQLite' ? 4 : 2);
        assert.equal(waiting, 8 - open);
        const results = await Promise.all(
          readers.map(async (r, i) => {
            const rows = [...((await firsts[i]!).value ?? [])];
            for (let page = await r.next(); page.done !== true; page = await r.next()) rows.push(...page.value);
            return rows.length;
          }),
        );
        assert.deepEqual(results, Array(8).fill(100));
        assert.deepEqual(store.snapshotReads().open, 0);
        assert.ok(store.snapshotReads().connections <= 4);
      }));
  });
}

describe('student pages without a second connection', () => {
  test('an in-memory SQLite database reads the list once and hands it out in pages', async () => {
    const store: SqlStore = await openStore('sqlite::memory:');
    try {
      await store.importDataset({ students: school(95) });
      const { rows, sizes } = await collect(store.studentsOfSchoolPages(SCHOOL, '1', 40));
      assert.deepEqual(rows, active(school(95)));
      assert.deepEqual(sizes, [40, 40, 15]);
      assert.equal(store.snapshotReads().connections, 0);
    } finally {
      await store.close();
    }
  });

  test('a store not open yet fails the iteration, as its other calls', async () => {
    const store = new BackgroundStore(
      'postgres://127.0.0.1:1/none',
      { connectTimeoutMs: 200 },
      { initialDelayMs: 10_000 },
    );
    try {
      await assert.rejects(collect(store.studentsOfSchoolPages(SCHOOL, '1', 10)), StoreNotReadyError);
    } finally {
      await store.close();
    }
  });
});
