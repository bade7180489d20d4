/** Which database errors are worth retrying. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { isConnectionLost } from '../../src/store/db-errors.js';
import { DatabaseUrlError } from '../../src/store/open/database-url.js';
import { isTransientDatabaseError } from '../../src/store/open/open-retry.js';
import { MigrationError } from '../../src/store/schema/migrations.js';

describe('isTransientDatabaseError', () => {
  const withCode = (code: string, message = 'x'): Error => Object.assign(new Error(message), { code });

  test('unreachable, restarting or busy: retry', () => {
    for (const code of [
      'ECONNREFUSED',
      'ECONNRESET',
      'ETIMEDOUT',
      'ENOTFOUND',
      'EAI_AGAIN',
      'EHOSTUNREACH',
      '57P01',
      '57P03',
      '53300',
      '08006',
      '08001',
      '40P01',
      'SQLITE_BUSY',
    ]) {
      assert.equal(isTransientDatabaseError(withCode(code)), true, code);
    }
    assert.equal(isTransientDatabaseError(new Error('Connection terminated unexpectedly')), true);
    assert.equal(isTransientDatabaseError(new Error('timeout exceeded when trying to connect')), true);
    assert.equal(
      isTransientDatabaseError(new AggregateError([withCode('ECONNREFUSED'), withCode('ECONNREFUSED')], '')),
      true,
    );
    assert.equal(isTransientDatabaseError(new Error('wrapped', { cause: withCode('ECONNRESET') })), true);
  });

  test('what time cannot cure: fail at once', () => {
    for (const code of ['28P01', '28000', '3D000', '42P01', 'SQLITE_CANTOPEN', 'EACCES']) {
      assert.equal(isTransientDatabaseError(withCode(code)), false, code);
    }
    assert.equal(isTransientDatabaseError(new DatabaseUrlError('bad')), false);
    assert.equal(isTransientDatabaseError(new MigrationError('newer')), false);
    assert.equal(isTransientDatabaseError('text'), false);
    assert.equal(isTransientDatabaseError(new AggregateError([], '')), false);
  });
});

describe('isConnectionLost', () => {
  test("node-postgres' words for a connection that is gone, and the server's codes for one it ended", () => {
    for (const message of [
      'Connection terminated unexpectedly',
      'Connection terminated',
      'Client has encountered a connection error and is not queryable',
      'Client was closed and is not queryable',
    ])
      assert.equal(isConnectionLost(new Error(message)), true, message);
    for (const code of ['57P01', '57P02', 'ECONNRESET', 'EPIPE'])
      assert.equal(isConnectionLost(Object.assign(new Error('x'), { code })), true, code);
  });

  test("anything else is the query's own failure", () => {
    assert.equal(isConnectionLost(Object.assign(new Error('x'), { code: '23505' })), false);
    assert.equal(isConnectionLost(new Error('relation "students" does not exist')), false);
    assert.equal(isConnectionLost('Connection terminated'), false);
  });
});
