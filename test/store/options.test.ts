/** Store settings from the environment, and which database errors are worth retrying. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DatabaseUrlError } from '../../src/store/open/database-url.js';
import { MigrationError } from '../../src/store/schema/migrations.js';
import { isTransientDatabaseError } from '../../src/store/open/open-retry.js';
import { isConnectionLost } from '../../src/store/db-errors.js';
import { StoreOptionsError, storeOptionsFromEnv } from '../../src/store/open/store-options.js';

describe('storeOptionsFromEnv', () => {
  test('unset or empty variables leave the defaults', () => {
    assert.deepEqual(storeOptionsFromEnv({}), {});
    assert.deepEqual(storeOptionsFromEnv({ SIS_DATABASE_POOL_SIZE: '', SIS_DATABASE_STATEMENT_TIMEOUT_MS: '' }), {});
  });

  test('whole numbers within their limits', () => {
    assert.deepEqual(storeOptionsFromEnv({ SIS_DATABASE_POOL_SIZE: '25', SIS_DATABASE_STATEMENT_TIMEOUT_MS: '0' }), {
      poolSize: 25,
      statementTimeoutMs: 0,
    });
    assert.deepEqual(storeOptionsFromEnv({ SIS_DATABASE_STATEMENT_TIMEOUT_MS: ' 3000 ' }), {
      statementTimeoutMs: 3000,
    });
    // The service configuration's name for the pool size is the same setting.
    assert.deepEqual(storeOptionsFromEnv({ SIS_DATABASE_POOL_SIZE: '4' }), { poolSize: 4 });
    assert.deepEqual(storeOptionsFromEnv({ SIS_DATABASE_POOL_SIZE: '4' }), { poolSize: 4 });
  });

  test('every wrong value is named at once', () => {
    assert.throws(
      () => storeOptionsFromEnv({ SIS_DATABASE_POOL_SIZE: '0', SIS_DATABASE_STATEMENT_TIMEOUT_MS: '5s' }),
      (error: unknown) =>
        error instanceof StoreOptionsError &&
        error.code === 'ERR_STORE_OPTIONS' &&
        error.problems.length === 2 &&
        error.message ===
          'Invalid configuration:\n' +
            '  - SIS_DATABASE_POOL_SIZE="0": expected a whole number from 1 to 1000\n' +
            '  - SIS_DATABASE_STATEMENT_TIMEOUT_MS="5s": expected a whole number from 0 to 86400000',
    );
    assert.throws(() => storeOptionsFromEnv({ SIS_DATABASE_POOL_SIZE: '1.5' }), /SIS_DATABASE_POOL_SIZE="1.5"/);
    assert.throws(() => storeOptionsFromEnv({ SIS_DATABASE_POOL_SIZE: '-1' }), /expected a whole number/);
    assert.throws(() => storeOptionsFromEnv({ SIS_DATABASE_STATEMENT_TIMEOUT_MS: '86400001' }), /from 0 to 86400000/);
  });
});

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
