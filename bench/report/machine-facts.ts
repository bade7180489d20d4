/** What the figures were measured on: machine, versions, load generator, pinning, commit, priority. */
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { cpus, release, totalmem } from 'node:os';
import { describeGenerator } from '../load/generator.js';
import { HAS_TASKSET, REPO_ROOT, priorityNote } from '../load/processes.js';
import type { Cores } from '../load/processes.js';
import type { LoadGenerator } from '../load/spec.js';
import { fmt } from './print.js';

export function machineFacts(core: Cores, generator: LoadGenerator): string[] {
  const require = createRequire(import.meta.url);
  const version = (pkg: string): string => (require(`${pkg}/package.json`) as { version: string }).version;
  const git = (...args: string[]): string => {
    try {
      return execFileSync('git', args, {
        cwd: REPO_ROOT,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      }).trim();
    } catch {
      return '';
    }
  };
  const c = cpus();
  const dirty = git('status', '--porcelain', '--untracked-files=no') !== '';
  return [
    `CPU: ${c[0]?.model ?? 'unknown'} × ${c.length} (logical cores), memory ${fmt(totalmem() / 2 ** 30, 1)} GiB, Linux ${release()}`,
    `Node ${process.version}; soap (node-soap) ${version('soap')}`,
    `Load generator: ${describeGenerator(generator)}${process.env['BENCH_LOAD'] ? ` (BENCH_LOAD=${process.env['BENCH_LOAD']})` : ' (the default: wrk when on PATH)'}`,
    core.server === null
      ? `Pinning: none (${HAS_TASKSET ? 'one core' : 'no taskset'}): servers and load generator share the cores`
      : `Pinning: servers on core ${core.server} (taskset -c ${core.server}), load generator on core ${core.load} (taskset -c ${core.load})`,
    `Commit: ${git('rev-parse', '--short', 'HEAD') || 'unknown'}${dirty ? ' with uncommitted changes in tracked files' : ''}`,
    ...(priorityNote() === null ? [] : [`Priority: ${priorityNote()}`]),
  ];
}
