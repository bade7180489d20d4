/**
 * `npm start` runs scripts/start.js, which never builds: a missing build is one line naming the
 * command to run, a build older than src/ one line before the built service starts. Run here on a
 * copy of the script in a directory laid out as a checkout, with a stand-in for the built CLI.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
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

const run = (dir: string) =>
  spawnSync(process.execPath, [join(dir, 'scripts', 'start.js'), 'serve'], { encoding: 'utf8', cwd: dir });

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
});
