/**
 * The store, looped over both dialects: SQLite on a temporary file always, PostgreSQL when
 * SIS_TEST_POSTGRES_URL is set (each database in a fresh schema, dropped at the end).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { DatasetError } from '../../src/store/import/dataset-check.js';
import { DEMO_DATASET } from '../../src/store/import/demo-data.js';
import { openStore } from '../../src/store/open/open-store.js';
import { migrations } from '../../src/store/schema/migration-list.js';
import type { SqlStore } from '../../src/store/sql/sql-store.js';
import type { StudentRecord } from '../../src/store/store.js';
import { cleanupTargets, storeTargets, withFreshStore } from '../helpers/store-targets.js';
import type { FreshDatabase, StoreTarget } from '../helpers/store-targets.js';

const tempDir = mkdtempSync(join(tmpdir(), 'sis-store-'));
after(async () => {
  await cleanupTargets();
  rmSync(tempDir, { recursive: true, force: true });
});

/** Another store on the same database (several instances on one database). */
const open = (db: FreshDatabase): Promise<SqlStore> => openStore(db.url, { poolSize: 3 });

/** A trigger that makes the insert of device 'boom' fail, in each dialect. */
const FAIL_TRIGGER: Readonly<Record<StoreTarget['name'], string>> = {
  SQLite: `create trigger fail_boom before insert on devices when new.id = 'boom'
        begin select raise(abort, 'boom'); end`,
  PostgreSQL: `create function fail_boom() returns trigger language plpgsql as $$
        begin if new.id = 'boom' then raise exception 'boom'; end if; return new; end $$;
        create trigger fail_boom before insert on devices for each row execute function fail_boom()`,
};

const ids = (rows: readonly StudentRecord[]): string[] => rows.map((r) => r.id_student);
const student = (id: string, school = 'http://s.example', active = '1'): StudentRecord => ({
  id_student: id,
  fullName: `Student ${id}`,
  id_device: `dev-${id}`,
  ShowActive: active,
  school_base_url: school,
});

for (const target of storeTargets) {
  describe(`store on ${target.name}`, () => {
    if (target.skip !== null) {
      test(target.name, (t) => t.skip(target.skip!));
      return;
    }

    test('a new database is migrated and empty; reopening applies nothing twice', async () => {
      const db = await target.fresh();
      const first = await open(db);
      assert.equal(await first.isEmpty(), true);
      await first.ping();
      await first.importDataset(DEMO_DATASET);
      await first.close();
      await first.close(); // closing twice is harmless
      const second = await open(db);
      assert.equal(await second.isEmpty(), false);
      await second.close();
      const versions = await db.sql('select version from sis_migrations order by version');
      assert.deepEqual(
        versions.map((r) => Number(r['version'])),
        migrations.map((m) => m.version),
      );
    });

    test('a database newer than the program is refused', async () => {
      const db = await target.fresh();
      await (await open(db)).close();
      await db.sql(`insert into sis_migrations (version, name, applied_at) values (999, 'future', 'x')`);
      await assert.rejects(open(db), /schema version 999, newer than this program/);
    });

    test('several stores opening a new database at once migrate it once', async () => {
      // SQLite is synchronous within one process, so "at once" is only meaningful on PostgreSQL.
      const db = await target.fresh();
      const stores =
        target.name === 'PostgreSQL'
          ? await Promise.all([1, 2, 3, 4].map(() => open(db)))
          : [await open(db), await open(db)];
      for (const s of stores) await s.close();
      const rows = await db.sql('select count(*) as n from sis_migrations');
      assert.equal(Number(rows[0]!['n']), migrations.length);
    });

    test('students of a school: exact match on school and ShowActive, in import order', async () => {
      await withFreshStore(target, async (store) => {
        assert.deepEqual(await store.importDataset(DEMO_DATASET), { students: 5, devices: 5, marks: 0, push: 0 });
        assert.deepEqual(ids(await store.studentsOfSchool('http://school-a.example', '1')), ['1', '2']);
        assert.deepEqual(ids(await store.studentsOfSchool('http://school-a.example', '0')), ['3']);
        const [a1] = await store.studentsOfSchool('http://school-a.example', '1');
        assert.deepEqual(a1, DEMO_DATASET.students![0]);
        for (const [school, active] of [
          ['HTTP://school-a.example', '1'],
          ['http://school-a.example ', '1'],
          [' http://school-a.example', '1'],
          ['http://school-a.example', '1 '],
          ['http://school-a.example', 'Y'],
          ['', '1'],
        ] as const) {
          assert.deepEqual(await store.studentsOfSchool(school, active), [], `${school}|${active}`);
        }
      });
    });

    test('null fields stay null and empty strings stay empty strings', async () => {
      await withFreshStore(target, async (store) => {
        await store.importDataset(DEMO_DATASET);
        assert.deepEqual(await store.studentsOfSchool('http://school-b.example', '1'), [
          {
            id_student: '10',
            fullName: 'Plain Name',
            id_device: null,
            ShowActive: '1',
            school_base_url: 'http://school-b.example',
          },
        ]);
        assert.deepEqual(await store.studentsOfSchool('http://school-b.example', '0'), [
          {
            id_student: '11',
            fullName: '',
            id_device: '',
            ShowActive: '0',
            school_base_url: 'http://school-b.example',
          },
        ]);
        await store.importDataset({
          students: [{ id_student: '', fullName: null, id_device: null, ShowActive: '', school_base_url: '' }],
        });
        assert.deepEqual(await store.studentsOfSchool('', ''), [
          { id_student: '', fullName: null, id_device: null, ShowActive: '', school_base_url: '' },
        ]);
      });
    });

    test('device tokens: exact text, empty token, unknown and empty ids', async () => {
      await withFreshStore(target, async (store) => {
        assert.equal(await store.deviceToken(''), null);
        await store.importDataset(DEMO_DATASET);
        assert.equal(await store.deviceToken('1'), 'tok-AAA-111');
        assert.equal(await store.deviceToken('esc'), 'a<b & c>"d" \'e\' \u00e9\u00e8 \u0639\u0644\u064a');
        assert.equal(await store.deviceToken('ws'), '  padded  \r\n  text\t');
        assert.equal(await store.deviceToken('empty'), '');
        assert.equal(await store.deviceToken('ESC'), null);
        assert.equal(await store.deviceToken('nope'), null);
        // SQLite answers at once, without a promise (the hot path's lookup); a server with one.
        const answer = store.deviceToken('1');
        if (target.name === 'SQLite') assert.equal(answer, 'tok-AAA-111');
        else assert.ok(answer instanceof Promise);
        await answer;
        assert.equal(await store.deviceToken(''), null);
        await store.importDataset({
          devices: [
            { id: '', token: '(empty-id)' },
            { id: 'nul', token: null },
            { id: '\u{1F600}', token: 'astral \u{1F600}' },
          ],
        });
        assert.equal(await store.deviceToken(''), '(empty-id)');
        assert.equal(await store.deviceToken('nul'), null);
        assert.equal(await store.deviceToken('\u{1F600}'), 'astral \u{1F600}');
      });
    });

    test('isEmpty looks at students and devices', async () => {
      await withFreshStore(target, async (store) => {
        await store.importDataset({ devices: [{ id: 'd', token: 't' }] });
        assert.equal(await store.isEmpty(), false);
        await store.importDataset({}, { replace: true });
        assert.equal(await store.isEmpty(), true);
      });
    });

    test('order is the first import order, not key order, and upserts keep it', async () => {
      await withFreshStore(target, async (store) => {
        await store.importDataset({ students: ['9', '10', '1', 'b', 'a'].map((id) => student(id)) });
        assert.deepEqual(ids(await store.studentsOfSchool('http://s.example', '1')), ['9', '10', '1', 'b', 'a']);
        const report = await store.importDataset({
          students: [
            { ...student('1'), fullName: 'Renamed' },
            student('new'),
            student('9'),
            { ...student('b'), ShowActive: '0' },
          ],
        });
        assert.deepEqual(report, { students: 4, devices: 0, marks: 0, push: 0 });
        const active = await store.studentsOfSchool('http://s.example', '1');
        assert.deepEqual(ids(active), ['9', '10', '1', 'a', 'new']);
        assert.equal(active.find((s) => s.id_student === '1')?.fullName, 'Renamed');
        assert.deepEqual(ids(await store.studentsOfSchool('http://s.example', '0')), ['b']);
        await store.importDataset({ devices: [{ id: 'd', token: 'one' }] });
        await store.importDataset({ devices: [{ id: 'd', token: null }] });
        assert.equal(await store.deviceToken('d'), null);
      });
    });

    test('large imports are batched and keep their order', async () => {
      await withFreshStore(target, async (store) => {
        const many = Array.from({ length: 2345 }, (_, i) => student(String(2345 - i), 'http://big.example'));
        const devices = Array.from({ length: 1234 }, (_, i) => ({ id: `d${i}`, token: `t${i}` }));
        assert.deepEqual(await store.importDataset({ students: many, devices }), {
          students: 2345,
          devices: 1234,
          marks: 0,
          push: 0,
        });
        assert.deepEqual(ids(await store.studentsOfSchool('http://big.example', '1')), ids(many));
        assert.equal(await store.deviceToken('d1233'), 't1233');
      });
    });

    test('replace empties students and devices first', async () => {
      await withFreshStore(target, async (store) => {
        await store.importDataset(DEMO_DATASET);
        await store.importDataset({ students: [student('z'), student('y')] }, { replace: true });
        assert.deepEqual(ids(await store.studentsOfSchool('http://s.example', '1')), ['z', 'y']);
        assert.deepEqual(await store.studentsOfSchool('http://school-a.example', '1'), []);
        assert.equal(await store.deviceToken('1'), null);
      });
    });

    test('an import is all or nothing', async () => {
      await withFreshStore(target, async (store, db) => {
        await store.importDataset(DEMO_DATASET);
        // Refused before any write: invalid data.
        await assert.rejects(
          store.importDataset(
            { students: [student('ok'), { ...student('bad'), fullName: 'a\u0001' }] },
            { replace: true },
          ),
          (error: unknown) =>
            error instanceof DatasetError && /students\[1\]\.fullName: contains U\+0001/.test(error.message),
        );
        // Refused by the database after several batches were written: a trigger fails the last device.
        await db.sql(FAIL_TRIGGER[target.name]);
        const students = Array.from({ length: 1200 }, (_, i) => student(`n${i}`));
        await assert.rejects(
          store.importDataset(
            {
              students,
              devices: [
                { id: 'fine', token: 't' },
                { id: 'boom', token: 'x' },
              ],
            },
            { replace: true },
          ),
          /boom/,
        );
        await assert.rejects(store.importDataset({ students, devices: [{ id: 'boom', token: 'x' }] }), /boom/);
        assert.deepEqual(ids(await store.studentsOfSchool('http://school-a.example', '1')), ['1', '2']);
        assert.deepEqual(await store.studentsOfSchool('http://s.example', '1'), []);
        assert.equal(await store.deviceToken('1'), 'tok-AAA-111');
        assert.equal(await store.deviceToken('fine'), null);
        // The store still works after the rollback.
        await store.importDataset({ devices: [{ id: 'after', token: 'ok' }] });
        assert.equal(await store.deviceToken('after'), 'ok');
      });
    });

    test('auth codes are recorded with their time, nulls kept', async () => {
      await withFreshStore(target, async (store, db) => {
        await store.recordAuthCode('1234', '+100', new Date('2024-05-06T07:08:09.010Z'));
        await store.recordAuthCode(null, '', new Date('2024-05-06T07:08:10Z'));
        const rows = await db.sql('select code, phone, created_at from auth_codes order by id');
        assert.equal(rows.length, 2);
        assert.deepEqual([rows[0]!['code'], rows[0]!['phone']], ['1234', '+100']);
        assert.deepEqual([rows[1]!['code'], rows[1]!['phone']], [null, '']);
        assert.equal(new Date(rows[0]!['created_at'] as string | Date).toISOString(), '2024-05-06T07:08:09.010Z');
        assert.equal(await store.isEmpty(), true); // auth codes are not students or devices
      });
    });

    test("two stores on one database see each other's writes", async () => {
      const db = await target.fresh();
      const a = await open(db);
      const b = await open(db);
      try {
        await a.importDataset(DEMO_DATASET);
        assert.deepEqual(ids(await b.studentsOfSchool('http://school-a.example', '1')), ['1', '2']);
        await b.importDataset({ students: [student('x')], devices: [{ id: 'x', token: 'from b' }] }, { replace: true });
        assert.equal(await a.deviceToken('x'), 'from b');
        assert.equal(await a.deviceToken('1'), null);
        assert.deepEqual(ids(await a.studentsOfSchool('http://s.example', '1')), ['x']);
      } finally {
        await a.close();
        await b.close();
      }
    });
  });
}
