/** What the cluster primary and its workers say to each other (node:cluster IPC). */
import type { MetricsText } from '../observe/ops-endpoints.js';
import type { StartupFailure } from './startup-failure-report.js';

export const METRICS_REQ = 'sis:metrics-req';
export const METRICS_RES = 'sis:metrics-res';
/** Primary -> worker: stop accepting connections (answer with LISTENER_CLOSED). */
export const STOP_LISTENING = 'sis:stop-listening';
export const LISTENER_CLOSED = 'sis:listener-closed';
/** Primary -> worker: drain and exit. */
export const DRAIN = 'sis:drain';
/** Worker -> primary: it could not start; the primary reports it once, for all. */
export const STARTUP_FAILED = 'sis:startup-failed';

export interface StartupFailedMessage {
  readonly type: typeof STARTUP_FAILED;
  readonly failure: StartupFailure;
}

export interface Control {
  readonly type: typeof STOP_LISTENING | typeof LISTENER_CLOSED | typeof DRAIN;
}

export interface MetricsRequest {
  readonly type: typeof METRICS_REQ;
  readonly id: number;
}
export interface MetricsResponse {
  readonly type: typeof METRICS_RES;
  readonly id: number;
  readonly text?: MetricsText;
  readonly error?: string;
}
