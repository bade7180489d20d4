/**
 * SQLite's connection over node:sqlite (sqlite-driver.ts): reused prepared statements answer rows
 * as objects or arrays as each call asks, whatever the previous call on the same SQL asked;
 * single values; a statement being iterated is never handed out again; and SQLite's errors are
 * named by their SQLite code for the store's error mapping.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { errorCode } from '../../src/store/db-errors.js';
import { SqliteConnection } from '../../src/store/sqlite/sqlite-driver.js';

function database(): SqliteConnection {
  const db = new SqliteConnection(':memory:', { timeoutMs: 0 });
  db.exec(
    "create table devices (id text primary key, token text); insert into devices values ('1', 'tok'), ('2', null)",
  );
  return db;
}

const SQL = 'select token from devices where id = ?';

test('each call answers rows as it asks, on the one shared statement of the same SQL', () => {
  const db = database();
  assert.deepEqual(db.prepare(SQL).get(['1']), { token: 'tok' });
  assert.deepEqual(db.prepare(SQL).get(['1'], true), ['tok']);
  assert.deepEqual(db.prepare(SQL).get(['1']), { token: 'tok' });
  assert.deepEqual(db.prepare(SQL).all(['1'], true), [['tok']]);
  assert.equal(db.prepare(SQL).get(['none'], true), undefined);
  assert.equal(db.prepare(SQL).reader, true);
  assert.equal(db.prepare("update devices set token = 'x' where id = ?").reader, false);
  assert.equal(db.prepare("update devices set token = 'x' where id = ?").run(['2']).changes, 1);
  db.close();
});

test('row objects are plain, and follow a schema change under a reused `select *`', () => {
  const db = database();
  const row = db.prepare('select * from devices where id = ?').get(['1']) as object;
  assert.equal(Object.getPrototypeOf(row), Object.prototype);
  assert.deepEqual(row, { id: '1', token: 'tok' });
  db.exec("alter table devices add column label text default 'x'");
  assert.deepEqual(db.prepare('select * from devices where id = ?').get(['1']), { id: '1', token: 'tok', label: 'x' });
  db.close();
});

test('the shared statement is reused, but never handed out while it is still being iterated', () => {
  const db = database();
  const first = db.prepare('select id from devices order by id');
  assert.equal(db.prepare('select id from devices order by id'), first);
  const rows = first.iterate([]);
  rows.next();
  const second = db.prepare('select id from devices order by id');
  assert.notEqual(second, first);
  assert.deepEqual(second.all([], true), [['1'], ['2']]);
  rows.return?.();
  assert.equal(db.prepare('select id from devices order by id'), first, 'handed out again once the iteration ended');
  db.close();
});

test('an IMMEDIATE transaction commits what its work did, and rolls all of it back when the work throws', () => {
  const db = database();
  db.immediate(() => db.prepare('delete from devices where id = ?').run(['2']));
  assert.throws(
    () =>
      db.immediate(() => {
        db.prepare('delete from devices where id = ?').run(['1']);
        throw new Error('refused');
      }),
    /refused/,
  );
  assert.equal(db.inTransaction, false);
  assert.deepEqual(db.prepare('select id from devices').all([], true), [['1']]);
  db.close();
});

test("SQLite's errors are named by SQLite's code, extended codes by their primary one", () => {
  const db = database();
  const thrown = (work: () => unknown): unknown => {
    try {
      work();
    } catch (error) {
      return error;
    }
    return assert.fail('no error');
  };
  assert.equal(errorCode(thrown(() => db.exec("insert into devices values ('1', 'again')"))), 'SQLITE_CONSTRAINT');
  assert.equal(errorCode(thrown(() => db.exec('select * from nowhere'))), 'SQLITE_ERROR');
  db.exec('pragma query_only = on');
  assert.equal(errorCode(thrown(() => db.exec('delete from devices'))), 'SQLITE_READONLY');
  db.close();
});
