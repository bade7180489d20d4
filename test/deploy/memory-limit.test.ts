/**
 * A container's memory limit is respected with the V8 settings the image and the unit ship
 * (NODE_OPTIONS, docs/operations.md "Memory"): Node 22+ sizes its heap from the cgroup's limit
 * (half of the limit for the old generation, at least 256 MiB, plus the young generation) unless a
 * heap size is given, so the shipped flags must not give one. Checked for real: node with the
 * image's NODE_OPTIONS in a memory cgroup of 1 GiB made here (v1 or v2) reports a heap limit sized
 * from it (a quarter to three quarters of it; 2 GiB when the cgroup is not read on this machine).
 * Needs root and a writable cgroup file system; skipped with a message otherwise.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { repoRoot } from '../helpers/test-server.js';

const LIMIT = 1024 * 2 ** 20;

interface Cgroup {
  /** The file a process id is written to, to move that process in. */
  readonly procs: string;
  remove(): void;
}

/** A memory cgroup limited to `bytes`, or why none can be made here. */
function memoryCgroup(bytes: number): Cgroup | string {
  if (process.getuid?.() !== 0) return 'not root: cannot make a memory cgroup';
  const name = `sis-test-${process.pid}`;
  try {
    const v1 = '/sys/fs/cgroup/memory';
    if (existsSync(join(v1, 'memory.limit_in_bytes'))) {
      const dir = join(v1, name);
      mkdirSync(dir);
      writeFileSync(join(dir, 'memory.limit_in_bytes'), String(bytes));
      return { procs: join(dir, 'cgroup.procs'), remove: () => rmdirSync(dir) };
    }
    const v2 = '/sys/fs/cgroup';
    if (readFileSync(join(v2, 'cgroup.controllers'), 'utf8').includes('memory')) {
      writeFileSync(join(v2, 'cgroup.subtree_control'), '+memory');
      const dir = join(v2, name);
      mkdirSync(dir);
      writeFileSync(join(dir, 'memory.max'), String(bytes));
      return { procs: join(dir, 'cgroup.procs'), remove: () => rmdirSync(dir) };
    }
    return 'no memory cgroup controller here';
  } catch (error) {
    return `cannot make a memory cgroup here: ${error instanceof Error ? error.message : String(error)}`;
  }
}

const shipped = /\bNODE_OPTIONS=(\S+)/.exec(readFileSync(join(repoRoot, 'Dockerfile'), 'utf8'))?.[1];

describe('a container memory limit with the shipped V8 settings', () => {
  it('gives a heap limit sized from the cgroup’s memory limit', (t) => {
    assert.ok(shipped !== undefined, 'the Dockerfile sets NODE_OPTIONS');
    const cgroup = memoryCgroup(LIMIT);
    if (typeof cgroup === 'string') return t.skip(cgroup);
    try {
      const report =
        "const v8 = require('node:v8'); process.stdout.write(String(v8.getHeapStatistics().heap_size_limit))";
      const r = spawnSync('sh', ['-c', `echo $$ > ${cgroup.procs} && exec "$0" -e "$1"`, process.execPath, report], {
        encoding: 'utf8',
        env: { ...process.env, NODE_OPTIONS: shipped },
      });
      assert.equal(r.status, 0, r.stderr);
      const limit = Number(r.stdout);
      t.diagnostic(
        `heap limit ${(limit / 2 ** 20).toFixed(0)} MiB in a ${LIMIT / 2 ** 20} MiB cgroup, NODE_OPTIONS=${shipped}`,
      );
      assert.ok(limit < LIMIT * 0.75, `heap limit ${limit} bytes: not sized from the cgroup's ${LIMIT}`);
      assert.ok(limit > LIMIT / 4, `heap limit ${limit} bytes: not sized from the cgroup's ${LIMIT}`);
    } finally {
      cgroup.remove();
    }
  });
});
