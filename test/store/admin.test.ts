/**
 * The admin side of the store on both dialects: streamed import (staging, duplicate keys, all or
 * nothing, replace, dry run), paged snapshot export, counts and listings, single-device edits,
 * and the schema checks of tools that must not migrate. An import beside the service:
 * admin-side-by-side.test.ts.
 */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { csvSource } from '../../src/dataset/csv.js';
import { jsonDatasetSource } from '../../src/dataset/json-stream.js';
import { ImportRejectedError } from '../../src/store/import/bulk-import.js';
import { DatasetError } from '../../src/store/import/dataset-check.js';
import { DEMO_DATASET } from '../../src/store/import/demo-data.js';
import { openStore } from '../../src/store/open/open-store.js';
import { LATEST_SCHEMA_VERSION, migrations } from '../../src/store/schema/migration-list.js';
import { MigrationError } from '../../src/store/schema/migrations.js';
import { PAGE_ROWS } from '../../src/store/sql/sql-admin.js';
import { exported, ids, json, student, text } from '../helpers/admin-rows.js';
import { cleanupTargets, storeTargets, withFreshStore } from '../helpers/store-targets.js';

after(cleanupTargets);

for (const target of storeTargets) {
  describe(`admin store on ${target.name}`, () => {
    if (target.skip !== null) {
      test(target.name, (t) => t.skip(target.skip!));
      return;
    }

    test('a streamed import upserts as importDataset does: stored rows keep their place, new ones follow in file order', async () => {
      await withFreshStore(target, async (store) => {
        assert.deepEqual(await store.admin.importStream(json(DEMO_DATASET)), {
          students: 5,
          devices: 5,
          marks: 0,
          push: 0,
        });
        assert.deepEqual(await store.studentsOfSchool('http://school-b.example', '0'), [DEMO_DATASET.students![4]]);
        assert.equal(await store.deviceToken('ws'), '  padded  \r\n  text\t');
        await store.admin.importStream(
          json({
            students: [student('z', 'http://school-a.example'), { ...DEMO_DATASET.students![0]!, fullName: 'Renamed' }],
          }),
        );
        const a = await store.studentsOfSchool('http://school-a.example', '1');
        assert.deepEqual(ids(a), ['1', '2', 'z']);
        assert.equal(a[0]!.fullName, 'Renamed');
        // And the in-memory path continues after the streamed one.
        await store.importDataset({ students: [student('y', 'http://school-a.example')] });
        assert.deepEqual(ids(await store.studentsOfSchool('http://school-a.example', '1')), ['1', '2', 'z', 'y']);
      });
    });

    test('duplicate keys are reported with both lines, and nothing is written', async () => {
      await withFreshStore(target, async (store) => {
        const problems: string[] = [];
        const doc = '{"devices": [\n{"id": "a"},\n{"id": "b"},\n{"id": "a"},\n{"id": "a"}\n]}';
        await assert.rejects(
          store.admin.importStream(jsonDatasetSource(text(doc)), { onProblem: (p) => problems.push(p) }),
          (error: unknown) => error instanceof ImportRejectedError && error.problems === 2 && error.rows.devices === 4,
        );
        assert.deepEqual(problems, [
          'line 4: devices[2].id: duplicate key "a", first used by devices[0] on line 2',
          'line 5: devices[3].id: duplicate key "a", first used by devices[0] on line 2',
        ]);
        problems.length = 0;
        await assert.rejects(
          store.admin.importStream(csvSource(text('id,token\nx,1\ny,2\nx,3\n'), 'devices'), {
            onProblem: (p) => problems.push(p),
          }),
        );
        assert.deepEqual(problems, ['line 4: id: duplicate key "x", first used on line 2']);
        assert.equal(await store.isEmpty(), true);

        // Into a table that has rows (an upsert, where PostgreSQL finds the key twice in its merge).
        await store.admin.importStream(jsonDatasetSource(text('{"devices": [{"id": "k", "token": "old"}]}')));
        problems.length = 0;
        const upsert = '{"devices": [\n{"id": "k", "token": "new"},\n{"id": "n"},\n{"id": "n"}\n]}';
        await assert.rejects(
          store.admin.importStream(jsonDatasetSource(text(upsert)), { onProblem: (p) => problems.push(p) }),
          ImportRejectedError,
        );
        assert.deepEqual(problems, ['line 4: devices[2].id: duplicate key "n", first used by devices[1] on line 3']);
        assert.equal(await store.deviceToken('k'), 'old');
      });
    });

    test('U+0000 (which PostgreSQL text cannot hold) is reported as a problem, not a database error', async () => {
      await withFreshStore(target, async (store) => {
        const problems: string[] = [];
        const doc = '{"devices": [{"id": "a\\u0000", "token": "tab\\tback\\\\slash\\u0000"}]}';
        await assert.rejects(
          store.admin.importStream(jsonDatasetSource(text(doc)), { onProblem: (p) => problems.push(p) }),
          ImportRejectedError,
        );
        assert.deepEqual(problems, [
          'line 1: devices[0].id: contains U+0000, a character XML 1.0 does not allow',
          'line 1: devices[0].token: contains U+0000, a character XML 1.0 does not allow',
        ]);
      });
    });

    test('all or nothing: a database failure in the merge leaves everything as it was', async () => {
      await withFreshStore(target, async (store, db) => {
        await store.admin.importStream(json(DEMO_DATASET));
        await db.sql(
          target.name === 'SQLite'
            ? `create trigger fail_boom before insert on devices when new.id = 'boom' begin select raise(abort, 'boom'); end`
            : `create function fail_boom() returns trigger language plpgsql as $$
               begin if new.id = 'boom' then raise exception 'boom'; end if; return new; end $$;
               create trigger fail_boom before insert on devices for each row execute function fail_boom()`,
        );
        const students = Array.from({ length: 3000 }, (_, i) => student(`n${i}`));
        await assert.rejects(
          store.admin.importStream(
            json({
              students,
              devices: [
                { id: 'fine', token: 't' },
                { id: 'boom', token: 'x' },
              ],
            }),
            { replace: true },
          ),
          /boom/,
        );
        assert.deepEqual(ids(await store.studentsOfSchool('http://school-a.example', '1')), ['1', '2']);
        assert.deepEqual(await store.studentsOfSchool('http://s.example', '1'), []);
        assert.equal(await store.deviceToken('fine'), null);
        assert.equal(await store.deviceToken('1'), 'tok-AAA-111');
        // The session's staging tables are gone: the next import works.
        await store.admin.importStream(json({ devices: [{ id: 'after', token: 'ok' }] }));
        assert.equal(await store.deviceToken('after'), 'ok');
      });
    });

    test('replace empties the tables the file provides; a dry run writes nothing', async () => {
      await withFreshStore(target, async (store) => {
        await store.admin.importStream(json(DEMO_DATASET));
        await store.admin.importStream(csvSource(text('id,token\nonly,x\n'), 'devices'), { replace: true });
        assert.equal(await store.deviceToken('1'), null);
        assert.equal(await store.deviceToken('only'), 'x');
        assert.equal((await store.studentsOfSchool('http://school-a.example', '1')).length, 2, 'students untouched');
        const report = await store.admin.importStream(json({ students: [student('dry')], devices: [] }), {
          replace: true,
          dryRun: true,
        });
        assert.deepEqual(report, { students: 1, devices: 0, marks: 0, push: 0 });
        assert.equal((await store.studentsOfSchool('http://school-a.example', '1')).length, 2);
        assert.deepEqual(await store.studentsOfSchool('http://s.example', '1'), []);
        await store.admin.importStream(json({ students: [student('r')] }), { replace: true });
        assert.equal(await store.deviceToken('only'), null, 'a JSON file provides both tables');
        assert.deepEqual(ids(await store.studentsOfSchool('http://s.example', '1')), ['r']);
      });
    });

    test('export: pages of a snapshot, students in service order, devices in byte order', async () => {
      await withFreshStore(target, async (store) => {
        const n = 2 * PAGE_ROWS + 345;
        const students = Array.from({ length: n }, (_, i) =>
          student(String(n - i), `http://school-${i % 3}.example`, i % 7 === 0 ? '0' : '1'),
        );
        const devices = ['b', 'B', 'a', '\u00e9', '\u{1F600}', '', 'a b', 'Z'].map((id) => ({
          id,
          token: id === 'Z' ? null : `t-${id}`,
        }));
        await store.admin.importStream(json({ students, devices }));
        const out = await exported(store);
        assert.deepEqual(out.counts, { students: n, devices: devices.length, marks: 0, push: 0 });
        assert.deepEqual(ids(out.students), ids(students));
        assert.deepEqual(out.students[0], students[0]);
        assert.deepEqual(
          out.devices.map((d) => d.id),
          ['', 'B', 'Z', 'a', 'a b', 'b', '\u00e9', '\u{1F600}'],
        );
        assert.equal(out.devices.find((d) => d.id === 'Z')!.token, null);
        const onlyDevices = await exported(store, ['devices']);
        assert.deepEqual(onlyDevices.counts, { students: 0, devices: devices.length, marks: 0, push: 0 });
      });
    });

    test('stats, schools and the students of one school', async () => {
      await withFreshStore(target, async (store) => {
        await store.admin.importStream(json(DEMO_DATASET));
        await store.importDataset({ students: [{ ...student('nowhere'), school_base_url: null }] });
        await store.recordAuthCode('1', '2', new Date());
        assert.deepEqual(await store.admin.stats(), {
          students: 6,
          devices: 5,
          authCodes: 1,
          schools: 2,
          schemaVersion: LATEST_SCHEMA_VERSION,
        });
        assert.deepEqual(await store.admin.schools(), [
          { school: null, students: 1, active: 1 },
          { school: 'http://school-a.example', students: 3, active: 2 },
          { school: 'http://school-b.example', students: 2, active: 1 },
        ]);
        const many = Array.from({ length: PAGE_ROWS + 10 }, (_, i) =>
          student(`m${i}`, 'http://many.example', i % 2 === 0 ? '1' : '0'),
        );
        await store.admin.importStream(json({ students: many }));
        const pages: number[] = [];
        const seen: string[] = [];
        const total = await store.admin.forEachStudentOfSchool('http://many.example', null, async (rows) => {
          pages.push(rows.length);
          seen.push(...ids(rows));
        });
        assert.equal(total, many.length);
        assert.deepEqual(pages, [PAGE_ROWS, 10]);
        assert.deepEqual(seen, ids(many));
        const active: string[] = [];
        await store.admin.forEachStudentOfSchool(
          'http://many.example',
          '1',
          async (rows) => void active.push(...ids(rows)),
        );
        assert.deepEqual(active, ids(await store.studentsOfSchool('http://many.example', '1')));
      });
    });

    test('one device at a time: get, set (created, updated, null), remove', async () => {
      await withFreshStore(target, async (store) => {
        assert.equal(await store.admin.device('d'), null);
        assert.equal(await store.admin.setDevice('d', 'one'), 'created');
        assert.equal(await store.admin.setDevice('d', null), 'updated');
        assert.deepEqual(await store.admin.device('d'), { id: 'd', token: null });
        assert.equal(await store.deviceToken('d'), null);
        await assert.rejects(
          store.admin.setDevice('d', 'bad\u0000'),
          (error: unknown) => error instanceof DatasetError && /token: contains U\+0000/.test(error.message),
        );
        assert.equal(await store.admin.removeDevice('d'), true);
        assert.equal(await store.admin.removeDevice('d'), false);
        assert.equal(await store.admin.device('d'), null);
      });
    });

    test('tools that must not migrate refuse a database that is not up to date', async () => {
      const db = await target.fresh();
      await assert.rejects(
        openStore(db.url, { migrations: 'require' }),
        (error: unknown) => error instanceof MigrationError && /sis migrate/.test(error.message),
      );
      const first = await openStore(db.url);
      assert.deepEqual(
        first.migrationsApplied,
        migrations.map((m) => m.version),
      );
      await first.close();
      const again = await openStore(db.url, { migrations: 'require' });
      assert.deepEqual(again.migrationsApplied, []);
      await again.close();
      // Back to what version 1 was: without migration 2's indexes, migration 3's tables, migration 4's trigger, migration 5's index and table and migration 6's tables, migration 7's tables and column, migration 8's column (its outbox columns went with the table), migration 9's table and migration 12's trigger.
      await db.sql(`delete from sis_migrations where version >= 2`);
      await db.sql('drop index students_seq');
      if (target.name === 'PostgreSQL') {
        await db.sql('drop index devices_id_bytes');
        await db.sql('drop trigger students_data_version on students');
        await db.sql('drop function sis_bump_data_version()');
        await db.sql('drop table sis_data_versions');
        // Migration 12: AuthCode's commit deadline.
        await db.sql('drop trigger auth_codes_commit_by on auth_codes');
        await db.sql('drop function sis_check_commit_by()');
      }
      for (const table of ['marks', 'push_settings', 'outbox']) await db.sql(`drop table ${table}`);
      await db.sql('drop index auth_codes_phone_time');
      await db.sql('drop index auth_codes_created');
      await db.sql('drop table pruned_rows');
      for (const table of ['shadow_counts', 'shadow_differences', 'shadow_rules']) await db.sql(`drop table ${table}`);
      for (const table of ['sms_counters', 'sms_refusals', 'sms_blocked_ranges', 'sms_keys'])
        await db.sql(`drop table ${table}`);
      await db.sql('alter table auth_codes drop column country');
      await db.sql('alter table auth_codes drop column test');
      await assert.rejects(
        openStore(db.url, { migrations: 'require' }),
        new RegExp(`schema version 1, this program needs ${LATEST_SCHEMA_VERSION}; run \`sis migrate\` first`),
      );
      const migrated = await openStore(db.url);
      assert.deepEqual(
        migrated.migrationsApplied,
        migrations.map((m) => m.version).filter((v) => v > 1),
      );
      await migrated.close();
    });
  });
}
