/**
 * No dependency has an install script, and package.json's allowScripts approves none (SQLite is
 * Node's own node:sqlite: nothing is compiled or downloaded at install); no lockfile entry carries
 * a registry URL; and a strict install (as .ci/run and the Dockerfile run it) fails when a package
 * brings an install script, and passes with the repository's own files. Run with this machine's npm on copies of
 * package.json and package-lock.json (`npm ci --dry-run`: the lockfile is read, nothing is fetched
 * or run); skipped with a message where npm predates allowScripts (11.16).
 */
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { findExecutable } from '../clients/client-scenario.js';
import { repoRoot } from '../helpers/test-server.js';

interface LockEntry {
  readonly version?: string;
  readonly resolved?: string;
  readonly integrity?: string;
  readonly hasInstallScript?: boolean;
  readonly name?: string;
  readonly dependencies?: Record<string, string>;
}
interface Lock {
  readonly packages: Record<string, LockEntry>;
}
interface Pkg {
  readonly allowScripts?: Record<string, boolean>;
  readonly dependencies: Record<string, string>;
  readonly scripts: Record<string, string>;
}

const read = (file: string): unknown => JSON.parse(readFileSync(join(repoRoot, file), 'utf8'));
const pkg = read('package.json') as Pkg;
const lock = read('package-lock.json') as Lock;
const NPM = findExecutable('npm');
const STRICT_SKIP =
  NPM === null
    ? 'npm not found'
    : execFileSync(NPM, ['config', 'get', 'strict-allow-scripts'], { cwd: repoRoot, encoding: 'utf8' }).trim() ===
        'undefined'
      ? `npm ${execFileSync(NPM, ['-v'], { encoding: 'utf8' }).trim()} predates allowScripts (11.16)`
      : false;

const dirs: string[] = [];
after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** The package's name as npm resolves it: the entry's own for an alias, else its folder's. */
const nameOf = (path: string, entry: LockEntry): string =>
  entry.name ?? path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);

/**
 * `npm ci --dry-run --strict-allow-scripts` on a copy whose allowScripts is `allow` and whose
 * lockfile marks the packages `withScript` as having an install script.
 */
function strictInstall(
  allow: Record<string, boolean> | undefined,
  withScript: readonly string[] = [],
): { status: number | null; output: string } {
  const dir = mkdtempSync(join(tmpdir(), 'sis-allow-scripts-'));
  dirs.push(dir);
  // The repository's own prepare (its build) is no dependency's script and needs the sources.
  const scripts = Object.fromEntries(Object.entries(pkg.scripts).filter(([name]) => name !== 'prepare'));
  const copy: Record<string, unknown> = { ...pkg, scripts };
  if (allow === undefined) delete copy['allowScripts'];
  else copy['allowScripts'] = allow;
  writeFileSync(join(dir, 'package.json'), JSON.stringify(copy, null, 2));
  const packages = { ...lock.packages };
  for (const path of withScript) packages[path] = { ...packages[path], hasInstallScript: true };
  writeFileSync(join(dir, 'package-lock.json'), JSON.stringify({ ...lock, packages }, null, 2));
  const r = spawnSync(NPM!, ['ci', '--dry-run', '--strict-allow-scripts', '--no-audit', '--no-fund'], {
    cwd: dir,
    encoding: 'utf8',
    timeout: 300_000,
    env: { ...process.env, npm_config_ignore_scripts: 'false', npm_config_dangerously_allow_all_scripts: 'false' },
  });
  return { status: r.status, output: r.stdout + r.stderr };
}

describe('install scripts (allowScripts)', () => {
  it('has no dependency with an install script, and approves none', () => {
    const withScripts = Object.entries(lock.packages)
      .filter(([path, e]) => path !== '' && e.hasInstallScript === true)
      .map(([path, e]) => nameOf(path, e));
    assert.deepEqual(withScripts, [], 'dependencies with an install script (docs/deploying.md: install scripts)');
    assert.deepEqual(pkg.allowScripts, {}, 'the reviewed list today: empty');
  });

  it('keeps no registry address in the repository', () => {
    const withUrl = Object.entries(lock.packages)
      .filter(([, e]) => e.resolved !== undefined)
      .map(([path]) => path);
    assert.deepEqual(
      withUrl,
      [],
      'lockfile entries with a resolved URL: write it with omit-lockfile-registry-resolved',
    );
    assert.doesNotMatch(readFileSync(join(repoRoot, 'package-lock.json'), 'utf8'), /"resolved"|\/-\/[^"]+\.tgz/);
    assert.equal(existsSync(join(repoRoot, '.npmrc')), false, 'no project .npmrc (the machine’s config is used)');
  });

  it('installs strictly in CI and in the image', () => {
    const ci = readFileSync(join(repoRoot, '.ci', 'run'), 'utf8');
    assert.match(ci, /^"\$\{npm\[@\]\}" ci --no-audit --no-fund --strict-allow-scripts$/m);
    assert.match(ci, /\nnpm test\n$/, '.ci/run ends with the README’s test command');
    const dockerfile = readFileSync(join(repoRoot, 'Dockerfile'), 'utf8');
    assert.match(dockerfile, /npm ci --ignore-scripts && npm rebuild --strict-allow-scripts( \\)?\n/);
    assert.match(dockerfile, /^COPY package\.json package-lock\.json \.\/$/m);
  });

  describe('a strict install', { skip: STRICT_SKIP }, () => {
    it('fails when a package brings an install script, naming it', () => {
      const r = strictInstall(pkg.allowScripts, ['node_modules/ms']);
      assert.notEqual(r.status, 0);
      assert.match(r.output, /ESTRICTALLOWSCRIPTS/);
      assert.match(r.output, /\bms@\d/);
    });

    it('fails the same way without the allowScripts key', () => {
      const r = strictInstall(undefined, ['node_modules/ms']);
      assert.notEqual(r.status, 0);
      assert.match(r.output, /ESTRICTALLOWSCRIPTS/);
      assert.match(r.output, /\bms@\d/);
    });

    it('passes with the repository’s approvals', () => {
      const r = strictInstall(pkg.allowScripts);
      assert.equal(r.status, 0, r.output);
      assert.doesNotMatch(r.output, /install-scripts|allowScripts/);
    });
  });
});
