/**
 * node:sqlite loaded without Node 22's ExperimentalWarning (node-sqlite.ts), every other warning
 * still printed. Node 22 emits it while the module is first loaded; a child process stands that in
 * on any Node (its getBuiltinModule emits the warning as Node 22 does), then loads through the
 * store's loader.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { repoRoot } from '../helpers/test-server.js';

const loader = pathToFileURL(join(repoRoot, 'dist', 'src', 'store', 'sqlite', 'node-sqlite.js')).href;

function run(script: string): string {
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 30_000 });
  assert.equal(r.status, 0, r.stderr);
  return r.stderr;
}

const NODE_22 = `
const real = process.getBuiltinModule.bind(process);
process.getBuiltinModule = (id) => {
  if (id === 'node:sqlite') process.emitWarning('SQLite is an experimental feature and might change at any time', 'ExperimentalWarning');
  return real(id);
};`;

test("the store's loader drops node:sqlite's experimental warning, and only that one", () => {
  const stderr = run(`${NODE_22}
const { loadNodeSqlite } = await import(${JSON.stringify(loader)});
loadNodeSqlite();
process.emitWarning('another feature is experimental', 'ExperimentalWarning');
process.emitWarning('something else');`);
  assert.doesNotMatch(stderr, /SQLite is an experimental feature/);
  assert.match(stderr, /ExperimentalWarning: another feature is experimental/);
  assert.match(stderr, /Warning: something else/);
});

test('the stand-in prints the warning when node:sqlite is loaded another way (the test can fail)', () => {
  const stderr = run(`${NODE_22}
process.getBuiltinModule('node:sqlite');`);
  assert.match(stderr, /ExperimentalWarning: SQLite is an experimental feature/);
});
