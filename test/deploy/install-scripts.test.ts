/**
 * Install scripts run only where package.json's allowScripts approves them: every dependency with
 * an install script in the lockfile is approved or denied by an exact version, the lockfile keeps
 * the registry URLs npm checks those versions against, a strict install (as .ci/run and the
 * Dockerfile run it) fails on an unreviewed script or on an approval for another version, and
 * passes with the repository's own files. Run with this machine's npm on copies of package.json,
 * package-lock.json and .npmrc (`npm ci --dry-run`: the lockfile is read, nothing is fetched or
 * run); skipped with a message where npm predates allowScripts (11.16).
 */
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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
  readonly link?: boolean;
  readonly name?: string;
}

const read = (file: string): unknown => JSON.parse(readFileSync(join(repoRoot, file), 'utf8'));
const pkg = read('package.json') as { allowScripts?: Record<string, boolean>; scripts: Record<string, string> };
const lock = read('package-lock.json') as { packages: Record<string, LockEntry> };
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

/** `npm ci --dry-run --strict-allow-scripts` on a copy whose allowScripts is `allow`. */
function strictInstall(allow: Record<string, boolean> | undefined): { status: number | null; output: string } {
  const dir = mkdtempSync(join(tmpdir(), 'sis-allow-scripts-'));
  dirs.push(dir);
  for (const f of ['package-lock.json', '.npmrc']) copyFileSync(join(repoRoot, f), join(dir, f));
  // The repository's own prepare (its build) is no dependency's script and needs the sources.
  const scripts = Object.fromEntries(Object.entries(pkg.scripts).filter(([name]) => name !== 'prepare'));
  const copy: Record<string, unknown> = { ...pkg, scripts };
  if (allow === undefined) delete copy['allowScripts'];
  else copy['allowScripts'] = allow;
  writeFileSync(join(dir, 'package.json'), JSON.stringify(copy, null, 2));
  const r = spawnSync(NPM!, ['ci', '--dry-run', '--strict-allow-scripts', '--no-audit', '--no-fund'], {
    cwd: dir,
    encoding: 'utf8',
    timeout: 300_000,
    env: { ...process.env, npm_config_ignore_scripts: 'false', npm_config_dangerously_allow_all_scripts: 'false' },
  });
  return { status: r.status, output: r.stdout + r.stderr };
}

describe('install scripts (allowScripts)', () => {
  it('approves or denies every install script in the lockfile by its exact version, and nothing else', () => {
    const withScripts = Object.entries(lock.packages)
      .filter(([path, e]) => path !== '' && e.hasInstallScript === true)
      .map(([path, e]) => `${nameOf(path, e)}@${e.version}`)
      .sort();
    const entries = Object.keys(pkg.allowScripts ?? {}).sort();
    assert.deepEqual(entries, withScripts);
    for (const key of entries) assert.match(key, /^(@[^/@]+\/)?[^/@]+@\d+\.\d+\.\d+$/, `${key}: pinned to one version`);
    assert.deepEqual(pkg.allowScripts, { 'better-sqlite3@12.11.1': true }, 'the reviewed list today');
  });

  it('keeps every registry package’s URL in the lockfile (npm checks a pinned approval against it)', () => {
    const missing = Object.entries(lock.packages)
      .filter(([path, e]) => path !== '' && e.link !== true && e.integrity !== undefined && e.resolved === undefined)
      .map(([path]) => path);
    assert.deepEqual(missing, [], 'written with omit-lockfile-registry-resolved: run npm install with .npmrc');
    assert.match(readFileSync(join(repoRoot, '.npmrc'), 'utf8'), /^omit-lockfile-registry-resolved=false$/m);
  });

  it('installs strictly in CI and in the image', () => {
    const ci = readFileSync(join(repoRoot, '.ci', 'run'), 'utf8');
    assert.match(ci, /^"\$\{npm\[@\]\}" ci --no-audit --no-fund --strict-allow-scripts$/m);
    assert.match(ci, /\nnpm test\n$/, '.ci/run ends with the README’s test command');
    const dockerfile = readFileSync(join(repoRoot, 'Dockerfile'), 'utf8');
    assert.match(dockerfile, /npm ci --ignore-scripts && npm rebuild --strict-allow-scripts( \\)?\n/);
    assert.match(dockerfile, /^COPY package\.json package-lock\.json \.npmrc \.\/$/m);
  });

  describe('a strict install', { skip: STRICT_SKIP }, () => {
    it('fails on an unreviewed install script, naming it', () => {
      const r = strictInstall(undefined);
      assert.notEqual(r.status, 0);
      assert.match(r.output, /ESTRICTALLOWSCRIPTS/);
      assert.match(r.output, /better-sqlite3@12\.11\.1/);
    });

    it('fails when the approval names another version than the lockfile’s', () => {
      const r = strictInstall({ 'better-sqlite3@12.11.0': true });
      assert.notEqual(r.status, 0);
      assert.match(r.output, /ESTRICTALLOWSCRIPTS/);
    });

    it('passes with the repository’s approvals', () => {
      const r = strictInstall(pkg.allowScripts);
      assert.equal(r.status, 0, r.output);
      assert.doesNotMatch(r.output, /install-scripts|allowScripts/);
    });
  });
});
