/**
 * Instructions per function from a callgrind dump, with V8's compiled JavaScript named: callgrind
 * sees JIT code as bare addresses, which node's `--perf-basic-prof` map (`/tmp/perf-PID.map`:
 * start, size and name of every code object V8 made) names. Self cost only: what each function
 * executed itself, not its callees. Used by instructions.ts with BENCH_FUNCTIONS=N.
 */
import { readFileSync } from 'node:fs';

interface CodeRange {
  readonly start: number;
  readonly end: number;
  readonly name: string;
}

/** The perf map, sorted by start; a range reused by later code keeps the later name. */
function codeRanges(mapFile: string): CodeRange[] {
  const ranges: CodeRange[] = [];
  for (const line of readFileSync(mapFile, 'utf8').split('\n')) {
    const [start, size, ...name] = line.split(' ');
    if (start === undefined || size === undefined || name.length === 0) continue;
    const from = parseInt(start, 16);
    ranges.push({ start: from, end: from + parseInt(size, 16), name: name.join(' ') });
  }
  return ranges.sort((a, b) => a.start - b.start);
}

function nameAt(ranges: readonly CodeRange[], address: number): string {
  let lo = 0;
  let hi = ranges.length - 1;
  let found: CodeRange | undefined;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (ranges[mid]!.start <= address) {
      found = ranges[mid];
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found !== undefined && address < found.end ? `JS ${found.name}` : 'JS (not in the map)';
}

/**
 * Self instructions per function in one callgrind dump (a thread's file), JIT addresses named
 * through the perf map; the `n` largest, per request.
 */
export function topFunctions(dumpFile: string, mapFile: string, requests: number, n: number): [string, number][] {
  const names = new Map<string, string>();
  const self = new Map<string, number>();
  let current: string | null = null;
  let skipCallCost = false;
  const define = (line: string): string => {
    const m = /^c?fn=\((\d+)\)(?: (.*))?$/.exec(line)!;
    if (m[2] !== undefined) names.set(m[1]!, m[2]);
    return m[1]!;
  };
  for (const line of readFileSync(dumpFile, 'utf8').split('\n')) {
    if (line.startsWith('fn=')) current = define(line);
    else if (line.startsWith('cfn=')) define(line);
    else if (line.startsWith('calls=')) skipCallCost = true;
    else if (/^[0-9+*-]/.test(line)) {
      // The line after `calls=` is the call's inclusive cost, not this function's own.
      if (skipCallCost) skipCallCost = false;
      else if (current !== null) {
        const cost = Number(line.split(' ')[1]);
        if (Number.isFinite(cost)) self.set(current, (self.get(current) ?? 0) + cost);
      }
    }
  }
  const ranges = codeRanges(mapFile);
  const byName = new Map<string, number>();
  for (const [id, cost] of self) {
    const raw = names.get(id) ?? id;
    // callgrind marks a second context of one function with 'N; both count as the function.
    const plain = raw.replace(/'\d+$/, '');
    const name = /^0x[0-9a-f]+$/i.test(plain) ? nameAt(ranges, parseInt(plain, 16)) : plain;
    byName.set(name, (byName.get(name) ?? 0) + cost);
  }
  return [...byName]
    .map(([name, cost]): [string, number] => [name, cost / requests])
    .sort((a, b) => b[1] - a[1])
    .slice(0, n);
}
