/**
 * Several worker processes behind one port (node:cluster). The primary prepares the database
 * once (migrations, demo data), forks the workers, restarts one that dies, aggregates their
 * metrics for /metrics, and on SIGTERM/SIGINT lets each drain as a single process would.
 */
import cluster from 'node:cluster';
import type { Worker } from 'node:cluster';
import { AggregatorRegistry } from 'prom-client';
import type { Registry, RegistryContentType } from 'prom-client';
import type { Config } from '../config/config.js';
import type { Logger } from '../logging/logger.js';
import { DEMO_DATASET } from '../store/demo-data.js';
import { openStore } from '../store/open-store.js';
import type { MetricsText } from '../observe/ops-endpoints.js';
import { RelayedStartupFailure } from './startup-errors.js';
import type { StartupFailure } from './startup-errors.js';

const METRICS_REQ = 'sis:metrics-req';
const METRICS_RES = 'sis:metrics-res';
/** Primary -> worker: stop accepting connections (answer with LISTENER_CLOSED). */
const STOP_LISTENING = 'sis:stop-listening';
const LISTENER_CLOSED = 'sis:listener-closed';
/** Primary -> worker: drain and exit. */
const DRAIN = 'sis:drain';
/** Worker -> primary: it could not start; the primary reports it once, for all. */
const STARTUP_FAILED = 'sis:startup-failed';

interface StartupFailedMessage {
  readonly type: typeof STARTUP_FAILED;
  readonly failure: StartupFailure;
}

interface Control {
  readonly type: typeof STOP_LISTENING | typeof LISTENER_CLOSED | typeof DRAIN;
}

interface MetricsRequest {
  readonly type: typeof METRICS_REQ;
  readonly id: number;
}
interface MetricsResponse {
  readonly type: typeof METRICS_RES;
  readonly id: number;
  readonly text?: MetricsText;
  readonly error?: string;
}

/** Restarts allowed within a minute before the primary gives up (a crash loop helps no one). */
const MAX_RESTARTS_PER_MINUTE = 10;

export async function runPrimary(config: Config, log: Logger, workers: number, signals: SignalSource): Promise<number> {
  await prepareDatabase(config, log);
  const aggregator = new AggregatorRegistry();
  const listening = new Set<number>();
  const restarts: number[] = [];
  let stopping = false;
  let failed = false;
  /** The first failure a worker reported at start: thrown once every worker is gone. */
  let startupFailure: StartupFailure | null = null;
  let resolveDone!: () => void;
  const done = new Promise<void>((resolve) => (resolveDone = resolve));

  const fork = (): Worker => {
    const worker = cluster.fork({ SIS_DEMO_DATA: 'false' });
    worker.on('listening', () => listening.add(worker.id));
    worker.on('message', (message: MetricsRequest | Control | StartupFailedMessage) => {
      if (message?.type === LISTENER_CLOSED) listenerClosed(worker);
      if (message?.type === STARTUP_FAILED) {
        startupFailure ??= message.failure;
        stopForFailure();
        // It waits for this (its app is closed), so its message is always read before its exit.
        worker.kill();
        return;
      }
      if (message?.type === METRICS_REQ) answerMetrics(aggregator, worker, message);
    });
    return worker;
  };

  // Step 1: every worker stops accepting, so the port closes; step 2 (once all have): they drain.
  // In the other order a client told `Connection: close` by one worker could reconnect to the
  // port and be handed to a worker already closing, and lose its request.
  let waitingFor = new Set<number>();
  let drainTimer: NodeJS.Timeout | undefined;
  const drainAll = (): void => {
    clearTimeout(drainTimer);
    waitingFor = new Set();
    for (const worker of live()) if (worker.isConnected()) worker.send({ type: DRAIN } satisfies Control);
  };
  const listenerClosed = (worker: Worker): void => {
    if (waitingFor.delete(worker.id) && waitingFor.size === 0) drainAll();
  };
  const stopAll = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    const workers = live();
    log.info({ signal, workers: workers.length }, 'shutting down the workers');
    if (workers.length === 0) return resolveDone();
    waitingFor = new Set(workers.filter((w) => w.isConnected()).map((w) => w.id));
    for (const worker of workers) if (worker.isConnected()) worker.send({ type: STOP_LISTENING } satisfies Control);
    drainTimer = setTimeout(drainAll, 3000);
    if (waitingFor.size === 0) drainAll();
  };

  // Workers that listen drain as on a stop signal; those still starting have no request to answer.
  const stopForFailure = (): void => {
    failed = true;
    stopAll('worker failure');
    for (const worker of live()) if (!listening.has(worker.id)) worker.kill();
  };

  cluster.on('exit', (worker, code, signal) => {
    const started = listening.delete(worker.id);
    if (stopping) {
      if (code !== 0) failed = true;
      listenerClosed(worker);
      if (live().length === 0) resolveDone();
      return;
    }
    if (!started) {
      // Died before listening without saying why: the start's failure (the next would fare no better).
      startupFailure ??= unexplained(code, signal);
      return stopForFailure();
    }
    log.error({ worker: worker.id, pid: worker.process.pid, code, signal }, 'worker stopped unexpectedly');
    const now = Date.now();
    restarts.push(now);
    while (restarts[0]! < now - 60_000) restarts.shift();
    if (restarts.length <= MAX_RESTARTS_PER_MINUTE) return void fork();
    log.fatal({ restarts: restarts.length }, 'workers keep failing: stopping');
    stopForFailure();
  });

  signals.once((signal) => stopAll(signal));
  for (let i = 0; i < workers; i++) fork();
  log.info({ workers, pid: process.pid }, 'cluster primary started');
  await done;
  if (startupFailure !== null) throw new RelayedStartupFailure(startupFailure);
  log.info('stopped');
  return failed ? 1 : 0;
}

/** Migrates and seeds once, before any worker opens the database. */
async function prepareDatabase(config: Config, log: Logger): Promise<void> {
  const store = await openStore(config.databaseUrl, { poolSize: 1 });
  try {
    if (config.demoData && (await store.isEmpty())) log.info(await store.importDataset(DEMO_DATASET), 'empty database: demo data loaded');
  } finally {
    await store.close();
  }
}

/** A worker's /metrics: every worker's registry, gathered here. */
function answerMetrics(aggregator: AggregatorRegistry<RegistryContentType>, worker: Worker, message: MetricsRequest): void {
  const reply = (r: Omit<MetricsResponse, 'type' | 'id'>): void => {
    if (worker.isConnected()) worker.send({ type: METRICS_RES, id: message.id, ...r } satisfies MetricsResponse);
  };
  aggregator.clusterMetrics().then(
    (body) => reply({ text: { contentType: aggregator.contentType, body } }),
    (err: Error) => reply({ error: err.message }),
  );
}

function unexplained(code: number | null, signal: string | null): StartupFailure {
  const how = signal === null ? `with status ${code}` : `on signal ${signal}`;
  return {
    code: 'ERR_STARTUP',
    exitStatus: 1,
    lines: [`cannot start: a worker process exited ${how} before it listened (run with LOG_LEVEL=debug for details)`],
  };
}

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

function live(): Worker[] {
  return Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined);
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
  const pending = new Map<number, { resolve: (t: MetricsText) => void; reject: (e: Error) => void; timer: NodeJS.Timeout }>();
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

/** Where stop signals come from: the process's own, or a test's. */
export interface SignalSource {
  once(handler: (signal: string) => void): void;
}

export const processSignals: SignalSource = {
  once(handler) {
    let fired = false;
    const on = (signal: NodeJS.Signals): void => {
      if (fired) return;
      fired = true;
      handler(signal);
    };
    process.on('SIGTERM', on);
    process.on('SIGINT', on);
  },
};
