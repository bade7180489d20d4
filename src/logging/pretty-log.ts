/**
 * A small human-readable log format for terminals: `12:00:01.234 INFO  request key=value …`,
 * errors with their stack. The same lines as JSON, reshaped; pino-pretty would pull in a
 * dozen packages for this.
 */
import { Writable } from 'node:stream';

const LEVELS: Readonly<Record<number, string>> = {
  10: 'TRACE',
  20: 'DEBUG',
  30: 'INFO ',
  40: 'WARN ',
  50: 'ERROR',
  60: 'FATAL',
};
const COLORS: Readonly<Record<number, string>> = { 10: '90', 20: '36', 30: '32', 40: '33', 50: '31', 60: '35' };
const SKIP = new Set(['level', 'time', 'msg', 'pid', 'hostname', 'app', 'err']);

export function formatLine(line: string, color: boolean): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line.endsWith('\n') ? line : `${line}\n`;
  }
  const level = typeof entry['level'] === 'number' ? entry['level'] : 30;
  const time = typeof entry['time'] === 'string' ? entry['time'].slice(11, 23) : '';
  const name = LEVELS[level] ?? String(level);
  const label = color ? `\x1b[${COLORS[level] ?? '0'}m${name}\x1b[0m` : name;
  const fields = Object.entries(entry)
    .filter(([k]) => !SKIP.has(k))
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(' ');
  let out = `${time} ${label} ${String(entry['msg'] ?? '')}${fields === '' ? '' : ` ${fields}`}\n`;
  const err = entry['err'] as { stack?: unknown; message?: unknown } | undefined;
  if (err !== undefined) out += `  ${String(err.stack ?? err.message ?? JSON.stringify(err)).replace(/\n/g, '\n  ')}\n`;
  return out;
}

/** A stream for pino that writes each JSON line reformatted to `out`. */
export function prettyStream(out: NodeJS.WritableStream, color: boolean): Writable {
  let pending = '';
  return new Writable({
    write(chunk: Buffer | string, _encoding, callback) {
      pending += chunk.toString();
      let nl: number;
      while ((nl = pending.indexOf('\n')) >= 0) {
        out.write(formatLine(pending.slice(0, nl), color));
        pending = pending.slice(nl + 1);
      }
      callback();
    },
  });
}
