import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { basename, dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CLOCK_TICKS, cpuSecondsOf } from './proc-stat.js';

/** The compiled bench/ folder (dist/bench); this file lives in its load/ folder. */
export const BENCH_DIST = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const parent = resolve(BENCH_DIST, '..');
/** The repository root, whether this runs from dist/bench/ (the build) or bench/. */
export const REPO_ROOT = basename(parent) === 'dist' ? resolve(parent, '..') : parent;
export const CLI = resolve(REPO_ROOT, 'dist/src/cli/main.js');

export const HAS_TASKSET = spawnSync('taskset', ['-p', String(process.pid)], { stdio: 'ignore' }).status === 0;

/** The server core and the load-generator core, as taskset -c takes them. */
export interface Cores {
  readonly server: string | null;
  readonly load: string | null;
}

/** The server core and the load-generator core; both null without taskset or with one CPU. */
export function cores(cpuCount: number): Cores {
  if (!HAS_TASKSET || cpuCount < 2) return { server: null, load: null };
  return { server: '0', load: '1' };
}

/**
 * BENCH_NICE (e.g. -10) runs servers and load generator at that priority: on a machine shared
 * with other work it keeps the figures about the servers rather than about the neighbours.
 * With autogroup scheduling (Linux's default for desktops and many VMs) a process's nice only
 * counts inside its session, so each child then gets a session of its own and the nice is set
 * on that session's group.
 */
export const NICE = /^-?\d+$/.test(process.env['BENCH_NICE'] ?? '') ? process.env['BENCH_NICE']! : null;
const AUTOGROUP = readText('/proc/sys/kernel/sched_autogroup_enabled').trim() === '1';

function readText(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

/** How BENCH_NICE was applied, for the results; null without it. */
export function priorityNote(): string | null {
  if (NICE === null) return null;
  return AUTOGROUP
    ? `servers and load generator each in a scheduling group (session) of their own at nice ${NICE} (BENCH_NICE)`
    : `servers and load generator under nice -n ${NICE} (BENCH_NICE)`;
}

/** argv for a node script, pinned to a core when one is given. */
export function nodeCommand(
  core: string | null,
  args: readonly string[],
  wrapper: readonly string[] = [],
  node: string = process.execPath,
): { file: string; args: string[] } {
  const argv0 = [...wrapper, node, ...args];
  const pinned = core === null ? argv0 : ['taskset', '-c', core, ...argv0];
  const argv = NICE !== null && !AUTOGROUP ? ['nice', '-n', NICE, ...pinned] : pinned;
  return { file: argv[0]!, args: argv.slice(1) };
}

/** Children still running, killed if this process exits early (they may sit in their own sessions). */
const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const c of live) c.kill('SIGKILL');
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(130));

function spawnTracked(
  cmd: { file: string; args: string[] },
  env: NodeJS.ProcessEnv,
  stdout: 'ignore' | 'pipe' | number,
): ChildProcess {
  const groupNice = AUTOGROUP ? NICE : null;
  const proc = spawn(cmd.file, cmd.args, { env, stdio: ['ignore', stdout, 'pipe'], detached: groupNice !== null });
  if (proc.pid !== undefined) {
    live.add(proc);
    proc.once('exit', () => live.delete(proc));
    if (groupNice !== null) {
      try {
        writeFileSync(`/proc/${proc.pid}/autogroup`, groupNice);
      } catch {
        // Not allowed or not supported: the run goes on at normal priority.
      }
    }
  }
  return proc;
}

/** Moves this process (every thread) to a core so it stays off the server's. */
export function pinSelf(core: string | null): void {
  if (core !== null) spawnSync('taskset', ['-a', '-p', '-c', core, String(process.pid)], { stdio: 'ignore' });
}

export async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr !== null ? addr.port : 0;
      srv.close(() => resolvePort(port));
    });
  });
}

export interface Child {
  readonly name: string;
  readonly proc: ChildProcess;
  readonly pid: number;
  /** What the child wrote to stderr, for the error message when it dies. */
  stderr(): string;
  stop(): Promise<void>;
}

/**
 * Starts a long-running child (a server); its stdout is dropped, or goes to the file descriptor
 * given (as a supervisor hands a service its log file); stderr is kept for diagnostics.
 */
export function startChild(
  name: string,
  cmd: { file: string; args: string[] },
  env: NodeJS.ProcessEnv,
  stdout: 'ignore' | number = 'ignore',
): Child {
  const proc = spawnTracked(cmd, env, stdout);
  let err = '';
  proc.stderr?.setEncoding('utf8').on('data', (s: string) => {
    err = (err + s).slice(-4000);
  });
  if (proc.pid === undefined) throw new Error(`${name}: could not start ${cmd.file}`);
  const exited = new Promise<void>((done) => proc.once('exit', () => done()));
  return {
    name,
    proc,
    pid: proc.pid,
    stderr: () => err,
    async stop() {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Runs a short child to completion and returns its stdout; rejects on a non-zero exit. */
export function runChild(cmd: { file: string; args: string[] }, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  return new Promise((done, reject) => {
    const proc = spawnTracked(cmd, env, 'pipe');
    let out = '';
    let err = '';
    proc.stdout?.setEncoding('utf8').on('data', (s: string) => (out += s));
    proc.stderr?.setEncoding('utf8').on('data', (s: string) => (err += s));
    proc.once('error', reject);
    proc.once('exit', (code) => {
      if (code === 0) done(out);
      else reject(new Error(`${cmd.args.join(' ')} exited with ${code}: ${err.trim()}`));
    });
  });
}

/** Polls a URL until it answers (any status) or the child exits. */
export async function waitUntilUp(child: Child, url: string, timeoutMs = 15_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (child.proc.exitCode !== null) throw new Error(`${child.name} exited: ${child.stderr().trim()}`);
    try {
      const res = await fetch(url);
      await res.arrayBuffer();
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  throw new Error(`${child.name} did not answer at ${url} within ${timeoutMs} ms: ${child.stderr().trim()}`);
}

/** Resident set size now and its high-water mark, in bytes, from /proc (null elsewhere). */
export function memoryOf(pid: number): { rss: number; hwm: number } | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (key: string): number =>
      Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
    return { rss: kb('VmRSS'), hwm: kb('VmHWM') };
  } catch {
    return null;
  }
}

/** Resets the high-water mark (Linux: `5` to clear_refs) so VmHWM covers one run only. */
export function resetPeak(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

/** Samples a process's RSS while a run lasts: the peak, whether or not clear_refs works. */
export class PeakSampler {
  private peak = 0;
  private readonly timer: NodeJS.Timeout;
  private readonly cpuStart: number;
  private readonly started = process.hrtime.bigint();
  private readonly resetOk: boolean;

  constructor(private readonly pid: number) {
    this.resetOk = resetPeak(pid);
    this.cpuStart = cpuSecondsOf(pid);
    this.sample();
    this.timer = setInterval(() => this.sample(), 50);
  }

  private sample(): void {
    const m = memoryOf(this.pid);
    if (m !== null) this.peak = Math.max(this.peak, m.rss);
  }

  /** Peak RSS in bytes over the run, the CPU seconds the process used, and the wall seconds. */
  finish(): { peakRss: number; cpuSeconds: number; seconds: number } {
    clearInterval(this.timer);
    this.sample();
    const m = memoryOf(this.pid);
    const peakRss = this.resetOk && m !== null ? Math.max(this.peak, m.hwm) : this.peak;
    const seconds = Number(process.hrtime.bigint() - this.started) / 1e9;
    return { peakRss, cpuSeconds: cpuSecondsOf(this.pid) - this.cpuStart, seconds };
  }
}

/** CPU seconds the whole machine has been busy (every core, every process), from /proc/stat. */
export function machineBusySeconds(): number {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!;
    const [, user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).map(Number);
    return (user! + nice! + system! + irq! + softirq! + (steal ?? 0)) / CLOCK_TICKS;
  } catch {
    return NaN;
  }
}
