/**
 * The synchronous SQLite AuthCode transaction: it refuses to run inside a transaction someone else
 * opened on the connection (the store then queues behind it through Kysely), and rolls back whole.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { openStore } from '../../src/store/open/open-store.js';
import { sqliteAuthCodeWriter } from '../../src/store/sqlite/sqlite-auth-code.js';
import { SqliteConnection } from '../../src/store/sqlite/sqlite-driver.js';

const dir = mkdtempSync(join(tmpdir(), 'sis-sqlite-auth-'));
after(() => rmSync(dir, { recursive: true, force: true }));

async function migratedDatabase(name: string): Promise<SqliteConnection> {
  const file = join(dir, name);
  await (await openStore(`sqlite:${file}`)).close();
  return new SqliteConnection(file, { timeoutMs: 0 });
}

const request = (code: string, minute: number) => ({
  code,
  phone: '+15550100100',
  at: new Date(Date.UTC(2030, 4, 6, 7, minute)),
  message: `text ${code}`,
  maxPerHour: 2,
});

test('inside a transaction another caller opened, the direct write steps aside (returns null) and writes nothing', async () => {
  const database = await migratedDatabase('open-transaction.db');
  const accept = sqliteAuthCodeWriter(database);
  database.exec('begin');
  assert.equal(accept(request('1111', 0)), null);
  database.exec('rollback');
  assert.deepEqual(database.prepare('select count(*) from auth_codes').get([], true), [0]);
  assert.deepEqual(accept(request('1111', 0)), { accepted: true });
  assert.deepEqual(accept(request('2222', 1)), { accepted: true });
  assert.deepEqual(accept(request('3333', 2)), { accepted: false, reason: 'phone-hourly', retryAfterSeconds: 58 * 60 });
  assert.deepEqual(database.prepare('select count(*) from outbox').get([], true), [2]);
  assert.equal(database.inTransaction, false);
  database.close();
});

test('a failing outbox insert rolls the code back too', async () => {
  const database = await migratedDatabase('rollback.db');
  const accept = sqliteAuthCodeWriter(database);
  database.exec("create trigger no_outbox before insert on outbox begin select raise(abort, 'outbox refused'); end");
  assert.throws(() => accept(request('1111', 0)), /outbox refused/);
  assert.deepEqual(database.prepare('select count(*) from auth_codes').get([], true), [0]);
  assert.equal(database.inTransaction, false);
  database.close();
});
