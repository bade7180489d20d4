/**
 * Install scripts run only where package.json's allowScripts approves them: every dependency with
 * an install script in the lockfile is approved (or denied) by name, each approved one is a direct
 * dependency pinned to its exact reviewed version (the lockfile's integrity hash then names the very
 * tarball reviewed), no lockfile entry carries a registry URL, and a strict install (as .ci/run and
 * the Dockerfile run it) fails when the approval is missing or another package brings an install
 * script, and passes with the repository's own files. Run with this machine's npm on copies of
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
  it('names every package with an install script in allowScripts, and nothing else', () => {
    const withScripts = Object.entries(lock.packages)
      .filter(([path, e]) => path !== '' && e.hasInstallScript === true)
      .map(([path, e]) => nameOf(path, e))
      .sort();
    assert.deepEqual(Object.keys(pkg.allowScripts ?? {}).sort(), withScripts);
    assert.deepEqual(pkg.allowScripts, { 'better-sqlite3': true }, 'the reviewed list today');
  });

  it('pins each approved package exactly where it is declared, to the lockfile’s version and tarball', () => {
    for (const [name, approved] of Object.entries(pkg.allowScripts ?? {})) {
      if (!approved) continue;
      // A name-only approval holds only one version: a range here would let an update run a script
      // nobody read.
      assert.match(name, /^(@[^/@]+\/)?[^/@]+$/, `${name}: approved by name, the version pinned in dependencies`);
      const declared = pkg.dependencies[name];
      assert.ok(declared !== undefined, `${name} is approved but is not a direct dependency`);
      assert.match(declared, /^\d+\.\d+\.\d+$/, `${name}: "${declared}" is not one exact version`);
      // Every copy, nested ones too: the approval by name covers them all.
      const copies = Object.entries(lock.packages).filter(([path, e]) => path !== '' && nameOf(path, e) === name);
      assert.ok(copies.length > 0, `${name} is not in the lockfile`);
      for (const [path, entry] of copies) {
        assert.equal(entry.version, declared, `${path}: the lockfile holds another version than the reviewed one`);
        assert.match(entry.integrity ?? '', /^sha512-/, `${path}: the lockfile holds no integrity hash`);
      }
      assert.equal(
        lock.packages['']?.dependencies?.[name],
        declared,
        `${name}: the lockfile was written before the pin`,
      );
    }
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
    it('fails when the approval is removed, naming the package', () => {
      const r = strictInstall(undefined);
      assert.notEqual(r.status, 0);
      assert.match(r.output, /ESTRICTALLOWSCRIPTS/);
      assert.match(r.output, /better-sqlite3@12\.11\.1/);
    });

    it('fails when another package brings an install script, naming it', () => {
      const r = strictInstall(pkg.allowScripts, ['node_modules/ms']);
      assert.notEqual(r.status, 0);
      assert.match(r.output, /ESTRICTALLOWSCRIPTS/);
      assert.match(r.output, /\bms@\d/);
      assert.doesNotMatch(r.output, /better-sqlite3@/, 'the approved one is not named');
    });

    it('passes with the repository’s approvals', () => {
      const r = strictInstall(pkg.allowScripts);
      assert.equal(r.status, 0, r.output);
      assert.doesNotMatch(r.output, /install-scripts|allowScripts/);
    });
  });
});
