/**
 * Which load generator drives the runs: wrk when it is on PATH (a C event loop that needs a
 * fraction of autocannon's CPU per request, so a fast server is not capped by its load
 * generator), autocannon otherwise; BENCH_LOAD=autocannon|wrk forces one.
 */
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import type { LoadGenerator } from './spec.js';

/** `wrk -v`'s first line without the copyright ("wrk debian/4.1.0-3+b2 [epoll]"); null without wrk. */
function wrkVersion(): string | null {
  const r = spawnSync('wrk', ['-v'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  const first = r.error === undefined ? (r.stdout.split('\n', 1)[0] ?? '') : '';
  return first.startsWith('wrk ') ? first.replace(/\s+Copyright.*$/, '').trim() : null;
}

export function chooseGenerator(env: NodeJS.ProcessEnv): LoadGenerator {
  const asked = env['BENCH_LOAD'] ?? '';
  if (asked !== '' && asked !== 'wrk' && asked !== 'autocannon')
    throw new Error(`BENCH_LOAD=${asked}: expected wrk or autocannon`);
  if (asked === 'autocannon') return 'autocannon';
  if (wrkVersion() !== null) return 'wrk';
  if (asked === 'wrk') throw new Error('BENCH_LOAD=wrk, but no wrk on PATH');
  return 'autocannon';
}

/** The generator, its version and how it runs, for the results. */
export function describeGenerator(g: LoadGenerator): string {
  if (g === 'wrk') return `${wrkVersion() ?? 'wrk'}, one thread, request from a Lua script`;
  const version = (createRequire(import.meta.url)('autocannon/package.json') as { version: string }).version;
  return `autocannon ${version}, one Node process`;
}
