/**
 * `npm start` runs scripts/start.js, which never builds: a missing build is one line naming the
 * command to run, a build older than src/ one line before the built service starts. Run here on a
 * copy of the script in a directory laid out as a checkout, with a stand-in for the built CLI.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { repoRoot } from '../helpers/test-server.js';

const dirs: string[] = [];
after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** A checkout with src/a.ts; with `built`, a dist/ whose CLI prints its arguments. */
function checkout(built: boolean): string {
  const dir = mkdtempSync(join(tmpdir(), 'sis-start-'));
  dirs.push(dir);
  mkdirSync(join(dir, 'scripts'));
  copyFileSync(join(repoRoot, 'scripts', 'start.js'), join(dir, 'scripts', 'start.js'));
  writeFileSync(join(dir, 'package.json'), '{"type":"module"}\n');
  mkdirSync(join(dir, 'src', 'cli'), { recursive: true });
  writeFileSync(join(dir, 'src', 'cli', 'a.ts'), 'export {};\n');
  if (built) {
    mkdirSync(join(dir, 'dist', 'src', 'cli'), { recursive: true });
    writeFileSync(
      join(dir, 'dist', 'src', 'cli', 'main.js'),
      "process.stdout.write('started ' + process.argv.slice(2).join(' '));\n",
    );
    writeFileSync(join(dir, 'dist', '.build-stamp'), 'now');
  }
  return dir;
}

const run = (dir: string, env: NodeJS.ProcessEnv = process.env) =>
  spawnSync(process.execPath, [join(dir, 'scripts', 'start.js'), 'serve'], { encoding: 'utf8', cwd: dir, env });

/** The NODE_OPTIONS a deployment file sets (the image's ENV, the unit's Environment=). */
function nodeOptionsOf(file: string): string {
  const found = /\bNODE_OPTIONS=(\S+)/.exec(readFileSync(join(repoRoot, file), 'utf8'));
  assert.ok(found, `${file} sets NODE_OPTIONS`);
  return found[1]!;
}

/**
 * A built CLI that reports what it runs with: node's own flags, and how large V8 let the young
 * generation grow while short-lived objects were made (a semi-space is half of new_space).
 */
const REPORTING_MAIN = `
import v8 from 'node:v8';
let keep = [];
for (let i = 0; i < 3e6; i++) { keep.push({ i, s: 'x' + i }); if (keep.length > 200000) keep = []; }
const young = v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size;
process.stdout.write(JSON.stringify({ execArgv: process.execArgv, pid: process.pid, youngMiB: young / 2 ** 20 }));
`;

describe('scripts/start.js (npm start)', () => {
  it('stops in one line naming `npm run build` when nothing is built', () => {
    const r = run(checkout(false));
    assert.equal(r.status, 1);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /^sis: not built yet \(no dist\/src\/cli\/main\.js\): run `npm run build`.*\n$/);
  });

  it('starts the built CLI with its arguments, without a word when the build is fresh', () => {
    const dir = checkout(true);
    const past = new Date(Date.now() - 60_000);
    utimesSync(join(dir, 'src', 'cli', 'a.ts'), past, past);
    const r = run(dir);
    assert.equal(r.status, 0);
    assert.equal(r.stderr, '');
    assert.equal(r.stdout, 'started serve');
  });

  it('says in one line which source is newer than the build, then starts it anyway', () => {
    const dir = checkout(true);
    const past = new Date(Date.now() - 60_000);
    utimesSync(join(dir, 'dist', '.build-stamp'), past, past);
    const r = run(dir);
    assert.equal(r.status, 0);
    assert.equal(
      r.stderr,
      'sis: the build in dist/ is older than src/cli/a.ts: run `npm run build` to use the change\n',
    );
    assert.equal(r.stdout, 'started serve');
  });

  it('starts node with the V8 settings of the image and the unit, in the same process, young generation bounded', () => {
    const dir = checkout(true);
    writeFileSync(join(dir, 'dist', 'src', 'cli', 'main.js'), REPORTING_MAIN);
    const env = { ...process.env };
    delete env['NODE_OPTIONS'];
    const r = run(dir, env);
    assert.equal(r.status, 0, r.stderr);
    const report = JSON.parse(r.stdout) as { execArgv: string[]; pid: number; youngMiB: number };
    const shipped = nodeOptionsOf('Dockerfile');
    assert.equal(nodeOptionsOf('deploy/systemd/sis.service'), shipped);
    assert.deepEqual(report.execArgv, shipped.split(' '));
    assert.equal(report.pid, r.pid, 'the same process (execve), not a child');
    // --max-semi-space-size=16: new_space (both semi-spaces) at most 32 MiB; Node 24 alone grows it to 128.
    assert.ok(report.youngMiB <= 32, `young generation ${report.youngMiB} MiB`);
  });

  it('leaves the V8 settings to NODE_OPTIONS when it names them', () => {
    const dir = checkout(true);
    writeFileSync(join(dir, 'dist', 'src', 'cli', 'main.js'), REPORTING_MAIN);
    const r = run(dir, { ...process.env, NODE_OPTIONS: '--max-semi-space-size=2' });
    assert.equal(r.status, 0, r.stderr);
    const report = JSON.parse(r.stdout) as { execArgv: string[]; youngMiB: number };
    assert.deepEqual(report.execArgv, []);
    assert.ok(report.youngMiB <= 4, `young generation ${report.youngMiB} MiB`);
  });
});
