/**
 * The cluster primary: prepares the database once (migrations, demo data), forks the workers,
 * restarts one that dies, aggregates their metrics for /metrics, and on SIGTERM/SIGINT lets each
 * drain as a single process would. A worker that cannot start stops the whole service, reported
 * once here for all.
 */
import cluster from 'node:cluster';
import type { Worker } from 'node:cluster';
import { AggregatorRegistry } from 'prom-client';
import type { RegistryContentType } from 'prom-client';
import type { Config } from '../config/config.js';
import type { Logger } from '../logging/logger.js';
import { DEMO_DATASET } from '../store/import/demo-data.js';
import { openStore } from '../store/open/open-store.js';
import {
  DRAIN,
  LISTENER_CLOSED,
  METRICS_REQ,
  METRICS_RES,
  STARTUP_FAILED,
  STOP_LISTENING,
} from './cluster-messages.js';
import type { Control, MetricsRequest, MetricsResponse, StartupFailedMessage } from './cluster-messages.js';
import type { SignalSource } from './signals.js';
import { RelayedStartupFailure } from './startup-failure-report.js';
import type { StartupFailure } from './startup-failure-report.js';

/** Restarts allowed within a minute before the primary gives up (a crash loop helps no one). */
const MAX_RESTARTS_PER_MINUTE = 10;

export async function runPrimary(config: Config, log: Logger, workers: number, signals: SignalSource): Promise<number> {
  await prepareDatabase(config, log);
  return new Primary(log).run(workers, signals);
}

class Primary {
  readonly #aggregator = new AggregatorRegistry();
  readonly #listening = new Set<number>();
  readonly #restarts: number[] = [];
  #stopping = false;
  #failed = false;
  /** The first failure a worker reported at start: thrown once every worker is gone. */
  #startupFailure: StartupFailure | null = null;
  /** Workers asked to stop listening that have not said they did. */
  #waitingFor = new Set<number>();
  #drainTimer: NodeJS.Timeout | undefined;
  #resolveDone!: () => void;
  readonly #done = new Promise<void>((resolve) => (this.#resolveDone = resolve));

  constructor(private readonly log: Logger) {}

  async run(workers: number, signals: SignalSource): Promise<number> {
    cluster.on('exit', (worker, code, signal) => this.exited(worker, code, signal));
    signals.once((signal) => this.stopAll(signal));
    for (let i = 0; i < workers; i++) this.fork();
    this.log.info({ workers, pid: process.pid }, 'cluster primary started');
    await this.#done;
    if (this.#startupFailure !== null) throw new RelayedStartupFailure(this.#startupFailure);
    this.log.info('stopped');
    return this.#failed ? 1 : 0;
  }

  private fork(): Worker {
    const worker = cluster.fork({ SIS_DEMO_DATA: 'false' });
    worker.on('listening', () => this.#listening.add(worker.id));
    worker.on('message', (message: MetricsRequest | Control | StartupFailedMessage) => {
      if (message?.type === LISTENER_CLOSED) this.listenerClosed(worker);
      if (message?.type === STARTUP_FAILED) {
        this.#startupFailure ??= message.failure;
        this.stopForFailure();
        // It waits for this (its app is closed), so its message is always read before its exit.
        worker.kill();
        return;
      }
      if (message?.type === METRICS_REQ) answerMetrics(this.#aggregator, worker, message);
    });
    return worker;
  }

  /**
   * Step 1: every worker stops accepting, so the port closes; step 2 (once all have, or 3 s
   * later): they drain. In the other order a client told `Connection: close` by one worker could
   * reconnect to the port and be handed to a worker already closing, and lose its request.
   */
  private stopAll(signal: string): void {
    if (this.#stopping) return;
    this.#stopping = true;
    const workers = live();
    this.log.info({ signal, workers: workers.length }, 'shutting down the workers');
    if (workers.length === 0) return this.#resolveDone();
    this.#waitingFor = new Set(workers.filter((w) => w.isConnected()).map((w) => w.id));
    for (const worker of workers) if (worker.isConnected()) worker.send({ type: STOP_LISTENING } satisfies Control);
    this.#drainTimer = setTimeout(() => this.drainAll(), 3000);
    if (this.#waitingFor.size === 0) this.drainAll();
  }

  private listenerClosed(worker: Worker): void {
    if (this.#waitingFor.delete(worker.id) && this.#waitingFor.size === 0) this.drainAll();
  }

  private drainAll(): void {
    clearTimeout(this.#drainTimer);
    this.#waitingFor = new Set();
    for (const worker of live()) if (worker.isConnected()) worker.send({ type: DRAIN } satisfies Control);
  }

  /** Workers that listen drain as on a stop signal; those still starting have no request to answer. */
  private stopForFailure(): void {
    this.#failed = true;
    this.stopAll('worker failure');
    for (const worker of live()) if (!this.#listening.has(worker.id)) worker.kill();
  }

  private exited(worker: Worker, code: number | null, signal: string | null): void {
    const started = this.#listening.delete(worker.id);
    if (this.#stopping) {
      if (code !== 0) this.#failed = true;
      this.listenerClosed(worker);
      if (live().length === 0) this.#resolveDone();
      return;
    }
    if (!started) {
      // Died before listening without saying why: the start's failure (the next would fare no better).
      this.#startupFailure ??= unexplained(code, signal);
      return this.stopForFailure();
    }
    this.log.error({ worker: worker.id, pid: worker.process.pid, code, signal }, 'worker stopped unexpectedly');
    const now = Date.now();
    this.#restarts.push(now);
    while (this.#restarts[0]! < now - 60_000) this.#restarts.shift();
    if (this.#restarts.length <= MAX_RESTARTS_PER_MINUTE) return void this.fork();
    this.log.fatal({ restarts: this.#restarts.length }, 'workers keep failing: stopping');
    this.stopForFailure();
  }
}

/** Migrates and seeds once, before any worker opens the database. */
async function prepareDatabase(config: Config, log: Logger): Promise<void> {
  const store = await openStore(config.databaseUrl, { poolSize: 1 });
  try {
    if (config.demoData && (await store.isEmpty()))
      log.info(await store.importDataset(DEMO_DATASET), 'empty database: demo data loaded');
  } finally {
    await store.close();
  }
}

/** A worker's /metrics: every worker's registry, gathered here. */
function answerMetrics(
  aggregator: AggregatorRegistry<RegistryContentType>,
  worker: Worker,
  message: MetricsRequest,
): void {
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

function live(): Worker[] {
  return Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined);
}
