/**
 * One load run with wrk (one thread, driven by a generated Lua script), inside the load worker.
 *
 * wrk measures latency itself, to the microsecond, over every completed answer. It counts as
 * status errors only answers above 399, not 3xx; with an expected body, response() checks every
 * answer's status and body instead (which makes wrk hand each answer to Lua: slower).
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { reapedChildrenCpuSeconds } from './proc-stat.js';
import type { LoadResult, LoadSpec } from './spec.js';

/** A Lua string literal of the UTF-8 bytes: printable ASCII as is, any other byte as \ddd. */
export function luaString(text: string): string {
  const parts: string[] = [];
  for (const b of Buffer.from(text, 'utf8')) {
    // Three digits always, so a digit that follows cannot extend the escape.
    parts.push(
      b >= 0x20 && b < 0x7f && b !== 0x22 && b !== 0x5c ? String.fromCharCode(b) : `\\${String(b).padStart(3, '0')}`,
    );
  }
  return `"${parts.join('')}"`;
}

const MARK = '@@bench-wrk ';
const FIELDS = [
  'requests',
  'duration',
  'bytes',
  'connect',
  'read',
  'write',
  'status',
  'timeout',
  'p50',
  'p99',
  'max',
  'non2xx',
  'mismatches',
] as const;
type WrkSummary = Record<(typeof FIELDS)[number], number>;

export function wrkScript(spec: LoadSpec): string {
  const lines = [`wrk.method = ${luaString(spec.method)}`];
  if (spec.body !== undefined) lines.push(`wrk.body = ${luaString(spec.body)}`);
  for (const [name, value] of Object.entries(spec.headers))
    lines.push(`wrk.headers[${luaString(name)}] = ${luaString(value)}`);
  lines.push('local threads = {}', 'function setup(thread) threads[#threads + 1] = thread end');
  if (spec.expectBody !== undefined) {
    // Globals of each thread's own Lua state, read back in done() through thread:get().
    lines.push(
      `local expected = ${luaString(spec.expectBody)}`,
      'function init(args) non2xx = 0; mismatches = 0 end',
      'function response(status, headers, body)',
      '  if status < 200 or status > 299 then non2xx = non2xx + 1 elseif body ~= expected then mismatches = mismatches + 1 end',
      'end',
    );
  }
  const json = FIELDS.map((f) => `"${f}":%.0f`).join(',');
  lines.push(
    'function done(summary, latency, requests)',
    '  local non2xx, mismatches = 0, 0',
    '  for _, t in ipairs(threads) do non2xx = non2xx + (t:get("non2xx") or 0); mismatches = mismatches + (t:get("mismatches") or 0) end',
    '  local e = summary.errors',
    `  io.write(string.format('\\n${MARK}{${json}}\\n', summary.requests, summary.duration, summary.bytes,`,
    '    e.connect, e.read, e.write, e.status, e.timeout,',
    '    latency:percentile(50), latency:percentile(99), latency.max, non2xx, mismatches))',
    'end',
  );
  return `${lines.join('\n')}\n`;
}

export async function runWrk(spec: LoadSpec, scriptFile: string): Promise<LoadResult> {
  writeFileSync(scriptFile, wrkScript(spec));
  // wrk takes whole seconds only.
  const duration = `${Math.max(1, Math.ceil(spec.duration))}s`;
  const args = [
    '-t1',
    `-c${spec.connections}`,
    `-d${duration}`,
    '--timeout',
    '30s',
    '--latency',
    '-s',
    scriptFile,
    spec.url,
  ];
  const children0 = reapedChildrenCpuSeconds();
  const t0 = process.hrtime.bigint();
  const { code, out, err, wall } = await new Promise<{ code: number | null; out: string; err: string; wall: number }>(
    (done, reject) => {
      const proc = spawn('wrk', args, { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      let wall = NaN;
      proc.stdout.setEncoding('utf8').on('data', (s: string) => (out += s));
      proc.stderr.setEncoding('utf8').on('data', (s: string) => (err += s));
      proc.once('error', reject);
      proc.once('exit', () => (wall = Number(process.hrtime.bigint() - t0) / 1e9));
      proc.once('close', (code) => done({ code, out, err, wall }));
    },
  );
  // Node has waited for wrk by now, so its CPU time is in this process's children's times.
  const wrkCpu = reapedChildrenCpuSeconds() - children0;
  const line = out.split('\n').find((l) => l.startsWith(MARK));
  if (code !== 0 || line === undefined)
    throw new Error(`wrk ${args.join(' ')} exited with ${code}: ${err.trim() || out.trim()}`);
  const w = JSON.parse(line.slice(MARK.length)) as WrkSummary;
  const non2xx = spec.expectBody === undefined ? w.status : w.non2xx;
  const responses = w.requests - non2xx;
  const seconds = w.duration / 1e6;
  const none = w.requests === 0;
  const total = process.cpuUsage();
  return {
    responses,
    seconds,
    rps: responses / seconds,
    p50: none ? NaN : w.p50 / 1000,
    p99: none ? NaN : w.p99 / 1000,
    max: none ? NaN : w.max / 1000,
    non2xx,
    errors: w.connect + w.read + w.write,
    timeouts: w.timeout,
    mismatches: w.mismatches,
    cpu: wrkCpu / wall,
    cpuTotal: (total.user + total.system) / 1e6 + wrkCpu,
    bytes: w.bytes,
  };
}
