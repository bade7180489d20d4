/** The benchmark run's settings, from BENCH_* in the environment (see run.ts). */
import { join } from 'node:path';
import { chooseGenerator } from './generator.js';
import { REPO_ROOT } from './processes.js';
import type { LoadGenerator } from './spec.js';

export interface RunOptions {
  readonly quick: boolean;
  readonly seconds: number;
  readonly connections: number;
  readonly rounds: number;
  readonly warmup: number;
  readonly only: RegExp | null;
  readonly growth: boolean;
  readonly expectBody: boolean;
  /** Also run ours with LOG_LEVEL=silent beside the defaults (BENCH_SILENT=0: not). */
  readonly silent: boolean;
  /** Also run the necessary-work server (BENCH_NECESSARY=0: not; never on PostgreSQL). */
  readonly necessary: boolean;
  readonly generator: LoadGenerator;
  readonly out: string | null;
}

export function runOptions(env: NodeJS.ProcessEnv): RunOptions {
  const quick = env['BENCH_QUICK'] === '1';
  const generator = chooseGenerator(env);
  // wrk runs for whole seconds only: round up here so every figure printed is the one used.
  const whole = (n: number): number => (generator === 'wrk' ? Math.max(1, Math.ceil(n)) : n);
  const num = (name: string, fallback: number): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const n = Number(raw);
    if (!Number.isFinite(n) || n <= 0) throw new Error(`${name}=${raw}: expected a positive number`);
    return n;
  };
  return {
    quick,
    seconds: whole(num('BENCH_SECONDS', quick ? 1 : 5)),
    connections: Math.round(num('BENCH_CONNECTIONS', 50)),
    rounds: Math.round(num('BENCH_ROUNDS', quick ? 1 : 2)),
    warmup: whole(num('BENCH_WARMUP', quick ? 0.5 : 1)),
    only: env['BENCH_ONLY'] ? new RegExp(env['BENCH_ONLY']) : null,
    growth: env['BENCH_GROWTH'] !== '0',
    expectBody: env['BENCH_EXPECT_BODY'] === '1',
    silent: env['BENCH_SILENT'] !== '0',
    necessary: env['BENCH_NECESSARY'] !== '0' && (env['BENCH_DATABASE_URL'] ?? '') === '',
    generator,
    out: env['BENCH_OUT'] ?? (quick ? null : join(REPO_ROOT, 'bench', 'RESULTS.md')),
  };
}
