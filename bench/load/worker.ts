/**
 * One load run, in its own process so it can sit on its own core (wrk, its child, inherits the
 * pinning and the priority). Usage: node dist/bench/load/worker.js SPEC.json; prints one
 * LoadResult as JSON.
 */
import { readFileSync } from 'node:fs';
import { runAutocannon } from './autocannon.js';
import type { LoadSpec } from './spec.js';
import { runWrk } from './wrk.js';

const file = process.argv[2];
if (file === undefined) throw new Error('usage: load-worker SPEC.json');
// A file, not an argument: an expected body can pass the kernel's 128 KiB limit on one argument.
const spec = JSON.parse(readFileSync(file, 'utf8')) as LoadSpec;
(spec.generator === 'wrk' ? runWrk(spec, `${file}.lua`) : runAutocannon(spec)).then(
  (r) => process.stdout.write(`${JSON.stringify(r)}\n`),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  },
);
