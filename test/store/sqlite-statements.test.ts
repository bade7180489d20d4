/**
 * SQLite's reused prepared statements (sqlite-statement-cache.ts): the shared ones keep the mode
 * every caller expects (row objects), whatever the single-value reads of the same SQL do.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import BetterSqlite3 from 'better-sqlite3';
import { reuseStatements, valueReader } from '../../src/store/sqlite/sqlite-statement-cache.js';

function database(): BetterSqlite3.Database {
  const db = reuseStatements(new BetterSqlite3(':memory:'));
  db.exec(
    "create table devices (id text primary key, token text); insert into devices values ('1', 'tok'), ('2', null)",
  );
  return db;
}

const SQL = 'select token from devices where id = ?';

test('a single-value read answers the first column, or undefined without a row', () => {
  const value = valueReader(database());
  assert.equal(value(SQL, ['1']), 'tok');
  assert.equal(value(SQL, ['2']), null);
  assert.equal(value(SQL, ['none']), undefined);
});

test('single-value reads leave the shared statement of the same SQL answering row objects', () => {
  const db = database();
  const value = valueReader(db);
  assert.deepEqual(db.prepare(SQL).get('1'), { token: 'tok' });
  assert.equal(value(SQL, ['1']), 'tok');
  assert.deepEqual(db.prepare(SQL).get('1'), { token: 'tok' });
  assert.deepEqual(db.prepare(SQL).all('1'), [{ token: 'tok' }]);
});

test('the shared statement is reused, but never handed out while it is still being iterated', () => {
  const db = database();
  const first = db.prepare('select id from devices order by id');
  assert.equal(db.prepare('select id from devices order by id'), first);
  const rows = first.iterate();
  rows.next();
  const second = db.prepare('select id from devices order by id');
  assert.notEqual(second, first);
  assert.deepEqual(second.all(), [{ id: '1' }, { id: '2' }]);
  rows.return?.();
});
