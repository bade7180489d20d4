import { pino } from 'pino';
import type { Logger } from 'pino';
import { errSerializer } from '../ops/redact.js';
import { prettyStream } from '../ops/pretty-log.js';

export type { Logger };

export interface LoggerOptions {
  /** json, pretty, or auto: pretty when the destination is a terminal. */
  readonly format?: 'auto' | 'json' | 'pretty';
  /** Fields on every line (e.g. the worker number). */
  readonly base?: Record<string, unknown>;
}

/**
 * One JSON line per event. Phones and codes never reach the log: requests are logged by
 * operation and binding, never by their arguments or bodies; URLs only with their query values
 * masked; and the redact paths below catch the fields a later change might add by mistake.
 */
export function createLogger(
  level: string,
  destination: NodeJS.WritableStream = process.stdout,
  options: LoggerOptions = {},
): Logger {
  const tty = (destination as NodeJS.WritableStream & { isTTY?: boolean }).isTTY === true;
  const pretty = options.format === 'pretty' || (options.format === 'auto' && tty);
  return pino(
    {
      level,
      // `app`, not `service`: request lines have a `service` field of their own (the .asmx file).
      base: { app: 'student-info-service', ...options.base },
      timestamp: pino.stdTimeFunctions.isoTime,
      serializers: { err: errSerializer },
      redact: {
        paths: ['args', 'body', 'phone', 'code', 'headers.authorization', 'headers["x-api-key"]', 'headers.cookie', '*.args', '*.phone', '*.body'],
        censor: '***',
      },
    },
    pretty ? prettyStream(destination, tty) : destination,
  );
}
