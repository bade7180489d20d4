/**
 * `sis serve` as a child process, as operators start it: for tests about several processes
 * (two instances on one database, a SIGKILL and a restart); and other `sis` commands run beside it.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { chmodSync, cpSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { SMS_PROTECTION_OFF } from './sms-protection.js';
import { repoRoot } from './test-server.js';

/** The built CLI. */
export const CLI_MAIN = join(repoRoot, 'dist', 'src', 'cli', 'main.js');

let reachableCopy: string | undefined;

/**
 * The built CLI as another user (the service user `nobody`) can run it. A checkout where some
 * directory above it keeps others out (a clone under /root, any `mktemp -d`) cannot be entered by
 * that user, so the built code, its packages and package.json (ESM) are copied once into a
 * temporary directory every user may enter, and removed when the test process exits.
 */
export function cliReachableByOthers(): string {
  let dir = dirname(CLI_MAIN);
  for (;;) {
    if ((statSync(dir).mode & 0o001) === 0) break;
    const up = dirname(dir);
    if (up === dir) return CLI_MAIN;
    dir = up;
  }
  if (reachableCopy === undefined) {
    const copy = mkdtempSync(join(tmpdir(), 'sis-cli-'));
    chmodSync(copy, 0o755);
    process.once('exit', () => rmSync(copy, { recursive: true, force: true }));
    for (const part of [join('dist', 'src'), 'node_modules', 'package.json']) {
      cpSync(join(repoRoot, part), join(copy, part), { recursive: true });
    }
    chmodSync(join(copy, 'dist'), 0o755);
    reachableCopy = join(copy, 'dist', 'src', 'cli', 'main.js');
  }
  return reachableCopy;
}

export interface ServeProcess {
  readonly process: ChildProcess;
  readonly url: string;
  /** Every stdout line so far. */
  readonly lines: string[];
  /** The same lines, parsed (JSON log lines only). */
  readonly logs: Record<string, unknown>[];
}

/** The environment of a child: ours, without settings that would change what it does. */
export function childEnv(databaseUrl: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('SIS_') || k.startsWith('SIS_TEST_')) env[k] = v;
  return { ...env, SIS_DATABASE_URL: databaseUrl, ...extra };
}

/** A test service's environment: a free loopback port, no demo data, JSON log lines at info. */
function serveEnv(databaseUrl: string, extra: Record<string, string>): NodeJS.ProcessEnv {
  const base = { PORT: '0', HOST: '127.0.0.1', SIS_DEMO_DATA: 'false', LOG_LEVEL: 'info', SIS_LOG_FORMAT: 'json' };
  return childEnv(databaseUrl, { ...base, ...SMS_PROTECTION_OFF, ...extra });
}

/** Starts `sis serve` on a free port; resolves once it logs that it listens. */
export function startServe(databaseUrl: string, extra: Record<string, string> = {}): Promise<ServeProcess> {
  const child = spawn(process.execPath, [CLI_MAIN, 'serve'], {
    env: serveEnv(databaseUrl, extra),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const logs: Record<string, unknown>[] = [];
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no "listening" line within 15 s; stderr: ${stderr}`)), 15_000);
    child.once('exit', (code) => {
      // The time-out would otherwise keep the test process alive for its full 15 s.
      clearTimeout(timer);
      reject(new Error(`exited with ${code} before listening; stderr: ${stderr}`));
    });
    createInterface({ input: child.stdout! }).on('line', (line) => {
      lines.push(line);
      let entry: Record<string, unknown>;
      try {
        entry = JSON.parse(line) as Record<string, unknown>;
      } catch {
        return;
      }
      logs.push(entry);
      if (entry['msg'] === 'listening') {
        clearTimeout(timer);
        resolve({ process: child, url: entry['url'] as string, lines, logs });
      }
    });
  });
}

/** Stops it with `signal` (SIGTERM: a graceful stop); resolves with its exit code. */
export function stopServe(instance: ServeProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
  if (instance.process.exitCode !== null || instance.process.signalCode !== null)
    return Promise.resolve(instance.process.exitCode);
  const exited = new Promise<number | null>((resolve) => instance.process.once('exit', (code) => resolve(code)));
  instance.process.kill(signal);
  return exited;
}

/** Runs `sis ARGS` as a process on `databaseUrl` (and `extra` settings); resolves with its exit status and output. */
export function runSis(
  args: readonly string[],
  databaseUrl: string,
  extra: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [CLI_MAIN, ...args], {
    env: childEnv(databaseUrl, extra),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })));
}

export interface ServeExit {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** stderr's lines, without the empty one after the last newline. */
  readonly errorLines: string[];
  /** stdout's JSON log entries. */
  readonly logs: Record<string, unknown>[];
}

export interface RunOptions {
  readonly args?: readonly string[];
  /** Run as this user and group (the test must run as root): a service user such as nobody. */
  readonly user?: { readonly uid: number; readonly gid: number };
  readonly timeoutMs?: number;
}

/** Runs `sis serve` (or `args`) until it exits by itself: for start-up failures. */
export function runToExit(
  databaseUrl: string,
  extra: Record<string, string> = {},
  options: RunOptions = {},
): Promise<ServeExit> {
  const main = options.user === undefined ? CLI_MAIN : cliReachableByOthers();
  const child = spawn(process.execPath, [main, ...(options.args ?? ['serve'])], {
    env: serveEnv(databaseUrl, extra),
    stdio: ['ignore', 'pipe', 'pipe'],
    cwd: '/',
    ...(options.user === undefined ? {} : { uid: options.user.uid, gid: options.user.gid }),
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve, reject) => {
    const timeoutMs = options.timeoutMs ?? 20_000;
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`still running after ${timeoutMs} ms; stdout: ${stdout}; stderr: ${stderr}`));
    }, timeoutMs);
    child.once('close', (code) => {
      clearTimeout(timer);
      const logs: Record<string, unknown>[] = [];
      for (const line of stdout.split('\n')) {
        try {
          logs.push(JSON.parse(line) as Record<string, unknown>);
        } catch {
          // not a log line
        }
      }
      resolve({ code, stdout, stderr, errorLines: stderr.split('\n').filter((l) => l !== ''), logs });
    });
  });
}
