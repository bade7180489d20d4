/**
 * CPU times from /proc/PID/stat. Free of side effects, so the load worker can use it without
 * the orchestrator's signal handlers and child tracking (processes.ts).
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

export const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;

/** The fields after the parenthesised name (which may hold spaces); index 0 is field 3, state. */
function statFields(pid: number | 'self', thread?: number): string[] | null {
  try {
    const stat = readFileSync(thread === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${thread}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

/** CPU seconds (user + system, all threads) a process has used so far. */
export function cpuSecondsOf(pid: number | 'self'): number {
  const f = statFields(pid);
  // utime and stime are the 14th and 15th fields.
  return f === null ? NaN : (Number(f[11]) + Number(f[12])) / CLOCK_TICKS;
}

/** CPU seconds of a process's main thread alone (its JavaScript event loop, where requests are answered). */
export function mainThreadCpuSecondsOf(pid: number): number {
  const f = statFields(pid, pid);
  return f === null ? NaN : (Number(f[11]) + Number(f[12])) / CLOCK_TICKS;
}

/**
 * CPU seconds of a process's children that have exited and been waited for (cutime + cstime,
 * fields 16 and 17): how a parent learns what a finished child cost, as `time` does.
 */
export function reapedChildrenCpuSeconds(pid: number | 'self' = 'self'): number {
  const f = statFields(pid);
  return f === null ? NaN : (Number(f[13]) + Number(f[14])) / CLOCK_TICKS;
}
