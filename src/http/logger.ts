import { pino } from 'pino';
import type { Logger } from 'pino';

export type { Logger };

/**
 * One JSON line per event. Phones and codes never reach the log: requests are logged by
 * operation and binding, never by their arguments or bodies.
 */
export function createLogger(level: string, destination: NodeJS.WritableStream = process.stdout): Logger {
  return pino({ level, base: { service: 'student-info-service' }, timestamp: pino.stdTimeFunctions.isoTime }, destination);
}
