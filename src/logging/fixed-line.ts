import { pino } from 'pino';
import type { Logger } from 'pino';

/** Writes one line at info level: `fields` is the JSON of the line's own fields, each led by a comma. */
export type FixedLine = (fields: string) => void;

/**
 * A line of one fixed shape (the access log's), written byte for byte as `logger.info(fields,
 * msg)` would write it, to the logger's own stream. pino's own formatting walks the object, asks
 * its serializers and redaction of every field, and costs about three times as much a line as
 * this (bench/RESULTS.md); the access log writes one line per request. Only for fields
 * whose JSON the caller writes safely (numbers, and strings of our own making) and that no
 * redaction path names. The level is checked by the caller.
 */
export function fixedInfoLine(logger: Logger, msg: string): FixedLine {
  const internals = logger as unknown as Record<symbol, unknown>;
  const { lsCacheSym, timeSym, chindingsSym, endSym, streamSym } = pino.symbols;
  const start = (internals[lsCacheSym] as Record<number, unknown> | undefined)?.[logger.levels.values['info']!];
  const time = internals[timeSym];
  const chindings = internals[chindingsSym];
  const close = internals[endSym];
  const stream = internals[streamSym] as { write?: unknown } | undefined;
  if (
    typeof start !== 'string' ||
    typeof time !== 'function' ||
    typeof chindings !== 'string' ||
    typeof close !== 'string' ||
    typeof stream?.write !== 'function'
  )
    throw new Error('fixedInfoLine: this pino has another shape; log through logger.info instead');
  const end = `,"msg":${JSON.stringify(msg)}${close}`;
  const stamp = time as () => string;
  const sink = stream as { write(line: string): void };
  return (fields) => sink.write(start + stamp() + chindings + fields + end);
}
