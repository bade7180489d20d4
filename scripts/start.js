#!/usr/bin/env node
// `npm start` and `npm run sis`: runs the built service in dist/, never building it (the build is
// `npm install`'s and `npm run build`'s job, so a restart answers in well under 2 s). A missing
// build stops here in one line; a build older than a file under src/ is said in one line, then
// the built service starts anyway. The check is a walk of src/'s file times, a few milliseconds.
//
// It also gives the runtime the V8 settings the service is measured with (NODE_FLAGS below, the
// same as the image's and the systemd unit's NODE_OPTIONS; bench/RESULTS.md, issue 45): the node
// running this replaces itself (process.execve: the same process, no second one) with one started
// with them, unless the operator chose them already on the command line or in NODE_OPTIONS.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/**
 * Semi-spaces (the young generation's halves) of at most 16 MiB, Node 22's own: Node 24 lets them
 * grow to 64 MiB and Node 26 to 32, most of the difference in peak RSS between the runtimes, for
 * no throughput measured; smaller ones cost an import CPU on Node 22 (docs/operations.md,
 * "Memory"; bench/RESULTS.md). No heap limit is set: Node sizes the old generation from the
 * machine's memory or the container's (cgroup) limit, and a fixed one would override that.
 */
const NODE_FLAGS = ['--max-semi-space-size=16'];

const chosen = (flag) =>
  process.execArgv.some((a) => a.startsWith(flag)) || (process.env.NODE_OPTIONS ?? '').includes(flag);
const missing = NODE_FLAGS.filter((f) => !chosen(f.split('=')[0]));
if (missing.length > 0 && typeof process.execve === 'function')
  process.execve(process.execPath, [process.execPath, ...missing, ...process.execArgv, ...process.argv.slice(1)]);

const root = join(dirname(fileURLToPath(import.meta.url)), '..') + '/';
const main = join(root, 'dist/src/cli/main.js');

/** When the build last finished: `npm run build` writes the stamp, a bare `tsc` its build info. */
function builtAt() {
  let at = 0;
  for (const f of ['dist/.build-stamp', 'dist/.tsbuildinfo']) {
    const file = join(root, f);
    if (existsSync(file)) at = Math.max(at, statSync(file).mtimeMs);
  }
  return at;
}

/** The first file under `dir` changed after `since`, or null. */
function changedAfter(dir, since) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      const found = changedAfter(path, since);
      if (found !== null) return found;
    } else if (statSync(path).mtimeMs > since) return path;
  }
  return null;
}

if (!existsSync(main)) {
  process.stderr.write('sis: not built yet (no dist/src/cli/main.js): run `npm run build` (npm install does it too)\n');
  process.exit(1);
}
const src = join(root, 'src');
const changed = existsSync(src) ? changedAfter(src, builtAt()) : null;
if (changed !== null)
  process.stderr.write(
    `sis: the build in dist/ is older than ${changed.slice(root.length)}: run \`npm run build\` to use the change\n`,
  );
await import(pathToFileURL(main).href);
