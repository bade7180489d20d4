import { pino } from 'pino';
import type { DestinationStream, Logger } from 'pino';
import { LineBatch } from './line-batch.js';
import { prettyStream } from './pretty-log.js';
import { errSerializer } from './redact.js';

export type { Logger };

export interface LoggerOptions {
  /** json, pretty, or auto: pretty when the destination is a terminal. */
  readonly format?: 'auto' | 'json' | 'pretty';
  /** Fields on every line (e.g. the worker number). */
  readonly base?: Record<string, unknown>;
  /**
   * Buffer lines written to stdout (the default when the destination is stdout): see
   * `stdoutDestination`. Off for cluster workers, whose lines share one stdout with the others.
   */
  readonly buffered?: boolean;
}

/** Bytes gathered before a write, and the longest a line waits in the buffer when traffic is light. */
export const LOG_BUFFER_BYTES = 4096;
export const LOG_FLUSH_MS = 500;

/**
 * One JSON line per event. Phones and codes never reach the log: requests are logged by
 * operation and binding, never by their arguments or bodies; URLs only with their query values
 * masked; and the redact paths below catch the fields a later change might add by mistake.
 * They are top-level paths on purpose: a wildcard (`*.phone`) makes pino look into every field
 * of every line, measured dearer than the rest of the line's formatting (bench/RESULTS.md).
 */
export function createLogger(
  level: string,
  destination: NodeJS.WritableStream = process.stdout,
  options: LoggerOptions = {},
): Logger {
  const tty = (destination as NodeJS.WritableStream & { isTTY?: boolean }).isTTY === true;
  const pretty = options.format === 'pretty' || (options.format === 'auto' && tty);
  const stream: DestinationStream = pretty
    ? prettyStream(destination, tty)
    : destination === process.stdout && level !== 'silent'
      ? stdoutDestination(options.buffered !== false)
      : destination;
  return pino(
    {
      level,
      // `app`, not `service`: request lines have a `service` field of their own (the .asmx file).
      base: { app: 'student-info-service', ...options.base },
      timestamp: isoTimeOncePerMs,
      serializers: { err: errSerializer },
      redact: {
        paths: ['args', 'body', 'phone', 'code', 'headers.authorization', 'headers["x-api-key"]', 'headers.cookie'],
        censor: '***',
      },
    },
    stream,
  );
}

/**
 * stdout through pino's own SonicBoom destination instead of `process.stdout`, whose every line is
 * a write(2) of its own. Buffered, lines are gathered (LineBatch) up to LOG_BUFFER_BYTES and
 * written by one write of ~16 lines, and a timer writes what waits after LOG_FLUSH_MS when traffic
 * is light. The writes are synchronous: measured on one core, SonicBoom's asynchronous mode cost
 * more a line (each write is a trip through libuv's thread pool on the same core; bench/RESULTS.md)
 * and lengthened the tail, and a reader that stops reading blocks the process exactly as
 * `process.stdout` on a pipe does. What is buffered is lost only if the process is killed outright
 * (`kill -9`, the OOM killer): a stop, a fatal start-up error and an uncaught exception write it
 * out first (`flushLog`, and the exit hook below). Unbuffered, every line is one write, whole:
 * lines under 4 KiB stay atomic on a pipe that several workers share.
 */
function stdoutDestination(buffered: boolean): DestinationStream {
  if (!buffered) return pino.destination({ dest: 1, sync: true });
  const destination = new LineBatch(pino.destination({ dest: 1, sync: true }), LOG_BUFFER_BYTES, LOG_FLUSH_MS);
  // pino writes out its own buffers at exit only for asynchronous destinations: this one too.
  process.once('exit', () => {
    try {
      destination.flushSync();
    } catch {
      // A closed or broken stdout: nothing more can be written.
    }
  });
  return destination;
}

/**
 * Writes out what the logger holds and resolves once it is written (at most `timeoutMs` later,
 * should the destination be stuck: a full pipe nobody reads). Call before the process exits.
 */
export function flushLog(log: Logger, timeoutMs = 2000): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, timeoutMs);
    timer.unref();
    try {
      log.flush(() => {
        clearTimeout(timer);
        resolve();
      });
    } catch {
      // A destination that cannot flush (a plain stream): nothing is held back.
      clearTimeout(timer);
      resolve();
    }
  });
}

/** pino's ISO time, formatted once per millisecond instead of once per line (`toISOString` is not free). */
let stampMs = -1;
let stamp = '';
function isoTimeOncePerMs(): string {
  const now = Date.now();
  if (now !== stampMs) {
    stampMs = now;
    stamp = `,"time":"${new Date(now).toISOString()}"`;
  }
  return stamp;
}
