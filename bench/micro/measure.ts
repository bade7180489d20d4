/**
 * How a micro-benchmark case is timed: warmed up, then timed in five slices with
 * process.hrtime.bigint(); the median slice is the result.
 */
import { median } from '../report/stats.js';

export interface MicroCase {
  readonly group: string;
  readonly name: string;
  readonly fn: () => unknown;
  readonly async?: boolean;
}

// Results feed this so no call can be optimised away.
let sink = 0;
function consume(v: unknown): void {
  sink += typeof v === 'string' ? v.length : v === undefined || v === null ? 0 : 1;
}

/** What the results added up to: printed, so no call can be optimised away. */
export const checksum = (): number => sink;

/** Operations per second (median slice) and half the spread between slices, as a share of it. */
export async function measure(c: MicroCase, seconds: number): Promise<{ opsPerSec: number; spread: number }> {
  const sliceNs = BigInt(Math.round((seconds / 5) * 1e9));
  let batch = 1;
  const run = async (untilNs: bigint): Promise<number> => {
    let n = 0;
    const start = process.hrtime.bigint();
    const end = start + untilNs;
    let now = start;
    while (now < end) {
      // Batches keep the clock out of the measurement.
      for (let i = 0; i < batch; i++) consume(c.async === true ? await (c.fn() as Promise<unknown>) : c.fn());
      n += batch;
      now = process.hrtime.bigint();
    }
    return n / (Number(now - start) / 1e9);
  };
  // Warm-up: lets the JIT settle, and sizes batches to about 50 µs of work.
  const warm = await run(BigInt(Math.round(Math.min(0.5, seconds / 2) * 1e9)));
  batch = Math.max(1, Math.min(1024, Math.round(warm / 20_000)));
  const slices: number[] = [];
  for (let i = 0; i < 5; i++) slices.push(await run(sliceNs));
  const opsPerSec = median(slices);
  return { opsPerSec, spread: (Math.max(...slices) - Math.min(...slices)) / 2 / opsPerSec };
}
