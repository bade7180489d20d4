/**
 * Erased means gone from the disk, not only from query results: a code sent through a real
 * `sis serve` to a real gateway leaves no trace of its SMS text in the SQLite file or its
 * write-ahead log once delivered (after a checkpoint), though the code itself is still in
 * auth_codes, as the hourly limit needs; and once `sis prune` has removed the code too, neither
 * the code nor the phone is anywhere in the files' bytes.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, test } from 'node:test';
import { createPruneCommand } from '../../src/cli/prune-command.js';
import { operations } from '../../src/operations/index.js';
import { bindingClients } from '../helpers/binding-clients.js';
import { startServe, stopServe } from '../helpers/serve-process.js';
import { eventually, startSmsGateway } from '../helpers/sms-gateway.js';
import { sqliteRows } from '../helpers/sqlite-file.js';

const AuthCode = operations.find((o) => o.name === 'AuthCode')!;
const soap = bindingClients.find((c) => c.name === 'soap11')!;
const SECRET = 'erase-test-secret-of-32-bytes-or-more';
const dir = mkdtempSync(join(tmpdir(), 'sis-retention-file-'));

after(() => rmSync(dir, { recursive: true, force: true }));

/** Which of the database's files (main, -wal, -shm) hold `text` in their bytes. */
function filesHolding(file: string, text: string): string[] {
  const needle = Buffer.from(text, 'utf8');
  return [file, `${file}-wal`, `${file}-shm`]
    .filter((f) => existsSync(f) && readFileSync(f).includes(needle))
    .map((f) => f.slice(file.length) || 'db');
}

/** A TRUNCATE checkpoint from a connection of our own: the log copied into the file and emptied. */
async function checkpoint(file: string): Promise<void> {
  await eventually(() => {
    const db = new DatabaseSync(file);
    try {
      const result = db.prepare('pragma wal_checkpoint(TRUNCATE)').get() as { busy: number } | undefined;
      return result?.busy === 0 ? true : undefined;
    } finally {
      db.close();
    }
  });
}

test('delivered SMS texts, then pruned codes and phones, are gone from the SQLite file bytes', async () => {
  const file = join(dir, 'erase.db');
  const gateway = await startSmsGateway(SECRET);
  const service = await startServe(`sqlite:${file}`, {
    SIS_SHUTDOWN_GRACE_MS: '0',
    SIS_SMS_WEBHOOK_URL: gateway.url,
    SIS_SMS_WEBHOOK_SECRET: SECRET,
    SIS_OUTBOX_POLL_MS: '50',
  });
  const code = 'K7Q-ERASE-91';
  const text = `Your code is ${code}`;
  try {
    const { res } = await soap.call(service.url, AuthCode, { code, phone: '+1 555 0177 642' });
    assert.equal(res.status, 200);
    const [sms] = await gateway.delivered(1);
    assert.equal(sms?.message, text, 'the gateway got the text');
    await eventually(() => {
      const [row] = sqliteRows<{ state: string; code: string; message: string }>(
        file,
        'select state, code, message from outbox',
      );
      return row?.state === 'delivered' ? row : undefined;
    });
    await checkpoint(file);
    assert.deepEqual(filesHolding(file, text), [], 'no SMS text left');
    assert.deepEqual(
      filesHolding(file, code),
      ['db'],
      'the code itself is still in auth_codes (and the search finds it)',
    );
    assert.deepEqual(filesHolding(file, '+15550177642'), ['db'], 'and the phone with it');

    let out = '';
    const output = { stdout: { write: (t: string) => (out += t) }, stderr: { write: (t: string) => (out += t) } };
    const env = { SIS_DATABASE_URL: `sqlite:${file}`, SIS_AUTH_CODES_PER_HOUR: '0' };
    assert.equal(await createPruneCommand(output).run(['--older-than', '0s'], env), 0, out);
    assert.match(out, /^auth_codes\t1 removed\t.*\noutbox\t1 removed\t/);
    await checkpoint(file);
    assert.deepEqual(filesHolding(file, code), [], 'the code is gone');
    assert.deepEqual(filesHolding(file, '15550177642'), [], 'the phone is gone');
    assert.deepEqual(filesHolding(file, '0177642'), [], 'not even masked in part beyond its last two digits');
  } finally {
    assert.equal(await stopServe(service), 0);
    await gateway.close();
  }
});
