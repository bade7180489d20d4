/**
 * WAL checkpoints in a worker thread (the serving process): the log is copied back into the
 * database file without any commit doing it, and if the thread dies the main connection takes
 * checkpoints back, so the log stays bounded either way.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { openStore } from '../src/store/open-store.js';
import type { SqlStore } from '../src/store/sql-store.js';
import { eventually } from './helpers/eventually.js';

const dir = mkdtempSync(join(tmpdir(), 'sis-checkpoint-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const size = (file: string): number => {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
};

async function codes(store: SqlStore, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    await store.acceptAuthCode({ code: `${i}`, phone: `+1555${String(i % 997).padStart(7, '0')}`, at: new Date(), message: `code ${i}`, maxPerHour: 0 });
  }
}

test('the thread copies the log into the database file; commits do not', async () => {
  const file = join(dir, 'thread.db');
  const store = await openStore(`sqlite:${file}`, { backgroundCheckpoints: true });
  try {
    assert.equal(store.checkpointer?.running, true);
    const before = size(file);
    await codes(store, 2000);
    await eventually(() => assert.ok(size(file) > before + 100_000, `database file ${size(file)} bytes, was ${before}`));
  } finally {
    await store.close();
  }
  assert.equal(store.checkpointer?.running, false);
});

test('when the thread dies, the main connection checkpoints again: the log stays bounded', async () => {
  const file = join(dir, 'crash.db');
  const store = await openStore(`sqlite:${file}`, { backgroundCheckpoints: true });
  try {
    await store.checkpointer!.terminate();
    await eventually(() => assert.equal(store.checkpointer!.running, false));
    // 4,000 transactions of a few pages each: over 60 MB of log without checkpoints.
    await codes(store, 4000);
    assert.ok(size(`${file}-wal`) < 16 * 1024 * 1024, `log ${size(`${file}-wal`)} bytes`);
  } finally {
    await store.close();
  }
});

test('a CLI store (the default) checkpoints inside commits, with no thread', async () => {
  const store = await openStore(`sqlite:${join(dir, 'cli.db')}`);
  try {
    assert.equal(store.checkpointer, undefined);
  } finally {
    await store.close();
  }
});
