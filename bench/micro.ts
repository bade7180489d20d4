/**
 * Micro-benchmarks of the hot path, in-process, one group per piece a request passes through:
 * envelope scan, routing, lookup (the store), answer text, reply write (node:http), log line,
 * metrics; the whole SOAP path without HTTP; large answers. Beside ours, cases named
 * "necessary:" do what the necessary-work server does for the same piece. Each case is warmed up, then timed in slices with
 * process.hrtime.bigint(); the median slice is reported.
 *
 * Usage: node dist/bench/micro.js [REGEX]   (BENCH_MICRO_SECONDS=1 per case; REGEX on
 * "group case", e.g. 'lookup|log line')
 */
import { soapFixtures } from './micro/fixtures.js';
import { largeCases } from './micro/large-cases.js';
import { checksum, measure } from './micro/measure.js';
import { pieceCases } from './micro/piece-cases.js';
import { soapCases } from './micro/soap-cases.js';
import { storeCases } from './micro/store-cases.js';
import { mainDataset } from './scenarios/datasets.js';

const filter = process.argv[2] === undefined ? null : new RegExp(process.argv[2]);
const seconds = Number(process.env['BENCH_MICRO_SECONDS'] ?? 1);

async function main(): Promise<void> {
  const data = mainDataset();
  const fx = soapFixtures(data);
  const store = await storeCases(data, fx.big.length);
  const cases = [...soapCases(fx), ...store.cases, ...pieceCases(), ...largeCases(fx.schoolWriter)];

  process.stdout.write(
    `Micro-benchmarks, Node ${process.version}, ${seconds} s per case (median of 5 slices after warm-up)\n\n`,
  );
  process.stdout.write('| group | case | ops/s | µs/op | ± |\n|---|---|---:|---:|---:|\n');
  try {
    for (const c of cases) {
      if (filter !== null && !filter.test(`${c.group} ${c.name}`)) continue;
      const r = await measure(c, seconds);
      process.stdout.write(
        `| ${c.group} | ${c.name} | ${Math.round(r.opsPerSec).toLocaleString('en-US')} | ${(1e6 / r.opsPerSec).toFixed(2)} | ${Math.round(r.spread * 100)}% |\n`,
      );
    }
  } finally {
    await store.close();
  }
  process.stdout.write(`\n(checksum ${checksum()})\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`micro: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
});
