/**
 * How long a start takes and what it costs: `npm start` from the command to the first answer
 * (wall time, and CPU of the whole process tree by then: npm, its shell, node), on a fresh SQLite
 * file each time; and the CPU of `sis --help` and of `sis serve` refusing a bad setting.
 *
 * Usage: node dist/bench/startup.js [REPO_DIR]   (default this checkout; BENCH_ROUNDS=5).
 * REPO_DIR may be another checkout (built), to compare before and after.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { CLOCK_TICKS } from './load/proc-stat.js';
import { REPO_ROOT, freePort } from './load/processes.js';
import { median } from './report/stats.js';

const repo = resolve(process.argv[2] ?? REPO_ROOT);
const rounds = Number(process.env['BENCH_ROUNDS'] ?? 5);

/** CPU seconds of a process and every descendant still running, from /proc. */
function treeCpuSeconds(root: number): number {
  const parent = new Map<number, number>();
  const cpu = new Map<number, number>();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      parent.set(Number(d), Number(f[1]));
      cpu.set(Number(d), (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) / CLOCK_TICKS);
    } catch {
      // Gone meanwhile.
    }
  }
  const inTree = (pid: number): boolean => {
    for (let p: number | undefined = pid; p !== undefined && p > 1; p = parent.get(p)) if (p === root) return true;
    return false;
  };
  let total = 0;
  for (const [pid, s] of cpu) if (inTree(pid)) total += s;
  return total;
}

/** `npm start` until its first answer: seconds from the command, and the tree's CPU seconds by then. */
async function npmStart(): Promise<{ wall: number; cpu: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'sis-startup-'));
  const port = await freePort();
  const started = process.hrtime.bigint();
  const child = spawn('npm', ['start', '--silent'], {
    cwd: repo,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      SIS_DATABASE_URL: `sqlite:${join(dir, 'db.sqlite')}`,
    },
    stdio: 'ignore',
    detached: true,
  });
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`npm start exited with ${child.exitCode} before answering`);
      try {
        const res = await fetch(`http://127.0.0.1:${port}/PushNotificationMobile.asmx?WSDL`);
        await res.arrayBuffer();
        break;
      } catch {
        await new Promise((r) => setTimeout(r, 10));
      }
    }
    const wall = Number(process.hrtime.bigint() - started) / 1e9;
    return { wall, cpu: treeCpuSeconds(child.pid!) };
  } finally {
    process.kill(-child.pid!, 'SIGTERM');
    await new Promise((r) => child.once('exit', r));
    rmSync(dir, { recursive: true, force: true });
  }
}

/** CPU seconds of one short command (user + system, children included), as /usr/bin/time counts it. */
function commandCpu(args: readonly string[], env: NodeJS.ProcessEnv = {}): number {
  const r = spawnSync('/usr/bin/time', ['-f', '%U %S', process.execPath, ...args], {
    cwd: repo,
    env: { ...process.env, ...env },
    encoding: 'utf8',
  });
  const last = r.stderr.trim().split('\n').pop() ?? '';
  const [user, system] = last.split(' ').map(Number);
  return (user ?? NaN) + (system ?? NaN);
}

const fmt = (xs: readonly number[], digits: number): string =>
  `${median(xs).toFixed(digits)} (${Math.min(...xs).toFixed(digits)}–${Math.max(...xs).toFixed(digits)})`;

async function main(): Promise<void> {
  const main = join(repo, 'dist/src/cli/main.js');
  const help: number[] = [];
  const bad: number[] = [];
  const start: { wall: number; cpu: number }[] = [];
  const load0 = loadavg()[0]!;
  for (let i = 0; i < rounds; i++) {
    help.push(commandCpu([main, '--help']));
    bad.push(commandCpu([main, 'serve'], { SIS_MAX_BODY_BYTES: 'abc' }));
    start.push(await npmStart());
  }
  process.stdout.write(
    [
      `Start-up of ${repo}, ${rounds} rounds, median (min–max); load average (1 min) ${load0.toFixed(2)} → ${loadavg()[0]!.toFixed(2)} on ${cpus().length} cores`,
      '',
      '| what | seconds |',
      '|---|---:|',
      `| \`sis --help\`, CPU | ${fmt(help, 2)} |`,
      `| \`sis serve\` with a bad setting, CPU | ${fmt(bad, 2)} |`,
      `| \`npm start\` to the first answer, wall | ${fmt(
        start.map((s) => s.wall),
        2,
      )} |`,
      `| \`npm start\` to the first answer, CPU of npm + node | ${fmt(
        start.map((s) => s.cpu),
        2,
      )} |`,
      '',
    ].join('\n'),
  );
}

main().catch((err: unknown) => {
  process.stderr.write(`startup: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
});
