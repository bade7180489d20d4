/**
 * SQLite's differences (schema/dialect.ts says why each exists): one file, one writer at a time, text
 * compared byte by byte, no server to wait for. Opening a file is sqlite-open.ts.
 */
import type { Dialect } from '../schema/dialect.js';
import { pinnedTransaction } from '../schema/transaction.js';

export const sqlite: Dialect = {
  name: 'sqlite',
  isServer: false,
  pooled: false,
  statementTimeoutLimitsRuns: false,
  ddl: {
    bigint: 'integer',
    timestamp: 'text',
    generatedKey: (column) => column.primaryKey().autoIncrement(),
    createSchema: async () => undefined,
    createByteOrderIndex: async () => undefined,
    createDataVersion: async () => undefined,
    createCommitDeadline: async () => undefined,
    commitDeadlineOnServerClock: async () => undefined,
  },
  writeTransaction(db, work) {
    // One connection for the whole callback: Kysely's SQLite driver holds its mutex until it returns.
    return db.connection().execute((conn) => pinnedTransaction(conn, sqlite, 'write', () => work(conn)));
  },
  lockForWrite: async () => undefined,
  writeLockStatement: () => null,
  begin: (mode) => (mode === 'write' ? 'begin immediate' : 'begin'),
  skipLocked: (query) => query,
  byteOrder: '',
  staging: {
    tempSchema: 'temp',
    ordColumn: 'ord integer primary key',
    mergeRefusesDuplicates: false,
    placeholders: (text) => text,
  },
};
