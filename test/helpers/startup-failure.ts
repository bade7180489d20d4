/**
 * What the start-up failure tests share: a directory per case that the service user can reach,
 * the service user (nobody) and whether it can be used, the check of the one line and the one log
 * entry, and a real database. Importing this module registers an `after` hook that removes the
 * directories and the stores' test databases.
 */
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import { DEMO_DATASET } from '../../src/store/import/demo-data.js';
import { openStore } from '../../src/store/open/open-store.js';
import type { ServeExit } from './serve-process.js';
import { cleanupTargets } from './store-targets.js';

const base = mkdtempSync(join(tmpdir(), 'sis-startup-'));
chmodSync(base, 0o755); // the service user must reach what the tests make for it
let counter = 0;
/** A new directory for one case, mode 755, under a base every user may enter. */
export const newDir = (): string => {
  const dir = join(base, `case-${++counter}`);
  mkdirSync(dir, { mode: 0o755 });
  return dir;
};
after(async () => {
  rmSync(base, { recursive: true, force: true });
  await cleanupTargets();
});

export const NOBODY = { uid: 65534, gid: 65534 };
export const AS_ROOT = typeof process.getuid === 'function' && process.getuid() === 0;
export const NOBODY_SKIP = AS_ROOT
  ? false
  : 'not running as root: cannot run the service as another user (nobody) to meet permission failures';

/** The one line, the exit status, the one log entry (no stack), and no stack anywhere. */
export function assertOneLine(exit: ServeExit, status: number, errorCode: string, line: RegExp): void {
  assert.equal(exit.code, status, `exit status; stderr: ${exit.stderr}`);
  assert.equal(exit.errorLines.length, 1, `one line on stderr:\n${exit.stderr}`);
  assert.match(exit.errorLines[0]!, line);
  assert.ok(
    !exit.stderr.includes('    at ') && !exit.stdout.includes('    at '),
    `no stack trace:\n${exit.stdout}\n${exit.stderr}`,
  );
  const fatal = exit.logs.filter((l) => l['level'] === 60);
  assert.equal(fatal.length, 1, `one log entry: ${exit.stdout}`);
  assert.equal(fatal[0]!['msg'], exit.errorLines[0]!.replace(/^sis serve: /, ''));
  assert.equal(fatal[0]!['errorCode'], errorCode);
  assert.equal(fatal[0]!['exitStatus'], status);
  assert.equal(fatal[0]!['err'], undefined, 'no error details below LOG_LEVEL=debug');
}

/** A migrated SQLite database with the demo data, closed. */
export async function realDatabase(path: string): Promise<void> {
  const store = await openStore(`sqlite:${path}`);
  await store.importDataset(DEMO_DATASET);
  await store.close();
}
