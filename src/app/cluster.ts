/**
 * Several worker processes behind one port (node:cluster): the worker's side here (stop when the
 * primary says, metrics through the primary, a failed start handed to it), the primary's in
 * cluster-primary.ts.
 */
import { AggregatorRegistry } from 'prom-client';
import type { Registry } from 'prom-client';
import type { MetricsText } from '../observe/ops-endpoints.js';
import {
  DRAIN,
  LISTENER_CLOSED,
  METRICS_REQ,
  METRICS_RES,
  STARTUP_FAILED,
  STOP_LISTENING,
} from './cluster-messages.js';
import type { Control, MetricsRequest, MetricsResponse, StartupFailedMessage } from './cluster-messages.js';
import type { StartupFailure } from './startup-failure-report.js';

/**
 * In a worker that could not start: hands the failure to the primary, which reports it once for
 * all workers, then waits for the primary to end this process (or 5 s, should it be gone).
 */
export function relayStartupFailure(failure: StartupFailure): Promise<void> {
  return new Promise((resolve) => {
    if (process.send === undefined || !process.connected) return resolve();
    const timer = setTimeout(resolve, 5000);
    timer.unref();
    process.once('disconnect', () => {
      clearTimeout(timer);
      resolve();
    });
    process.send({ type: STARTUP_FAILED, failure } satisfies StartupFailedMessage);
  });
}

/**
 * In a worker: resolves when the primary says to drain, or is gone. The primary coordinates the
 * stop, so a worker ignores SIGTERM/SIGINT (a terminal's Ctrl-C reaches every process).
 */
export function workerStop(stopListening: () => void): Promise<string> {
  process.on('SIGTERM', () => undefined);
  process.on('SIGINT', () => undefined);
  return new Promise((resolve) => {
    process.on('message', (message: Control) => {
      if (message?.type === STOP_LISTENING) {
        stopListening();
        process.send?.({ type: LISTENER_CLOSED } satisfies Control);
      } else if (message?.type === DRAIN) {
        resolve('primary');
      }
    });
    process.once('disconnect', () => resolve('primary gone'));
  });
}

/** In a worker: /metrics asks the primary, which gathers every worker's registry. */
export function workerMetrics(registry: Registry): () => Promise<MetricsText> {
  // prom-client answers the primary's collection requests once an AggregatorRegistry exists here.
  new AggregatorRegistry();
  AggregatorRegistry.setRegistries([registry]);
  const pending = new Map<
    number,
    { resolve: (t: MetricsText) => void; reject: (e: Error) => void; timer: NodeJS.Timeout }
  >();
  let next = 0;
  process.on('message', (message: MetricsResponse) => {
    if (message?.type !== METRICS_RES) return;
    const p = pending.get(message.id);
    if (p === undefined) return;
    pending.delete(message.id);
    clearTimeout(p.timer);
    if (message.text !== undefined) p.resolve(message.text);
    else p.reject(new Error(message.error ?? 'no metrics'));
  });
  return () =>
    new Promise<MetricsText>((resolve, reject) => {
      const id = ++next;
      const timer = setTimeout(() => {
        pending.delete(id);
        reject(new Error('the cluster primary did not answer within 6 s'));
      }, 6000);
      pending.set(id, { resolve, reject, timer });
      process.send?.({ type: METRICS_REQ, id } satisfies MetricsRequest);
    });
}
