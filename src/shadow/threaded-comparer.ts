/**
 * The Comparer compare mode uses: the legacy client and the comparison run on a worker thread
 * (comparison-thread.ts), so the thread that answers clients only copies each job into a batch,
 * posted once per turn of its event loop. Measured with bench/shadow-cost.ts (docs/migrating.md,
 * "What it costs"). The worker is started with the service (`ready`: loading it takes longer than
 * a burst of requests would wait under SIS_SHADOW_MAX_IN_FLIGHT). A worker that dies is logged,
 * its jobs are answered `skipped`, and the next job starts a new one.
 */
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import type { Logger } from '../logging/logger.js';
import type { AcceptRule } from './accepted.js';
import type { JobMessage, VerdictMessage, WorkerSettings } from './comparison-thread.js';
import type { ComparisonJob } from './comparison.js';
import type { Comparer, Verdict } from './in-process-comparer.js';

const LOST: Verdict = { judgement: { result: 'skipped', kind: null, example: null }, seconds: 0 };

export class ThreadedComparer implements Comparer {
  #worker: Worker | null = null;
  #nextId = 0;
  readonly #pending = new Map<number, (verdict: Verdict) => void>();
  #batch: { id: number; job: ComparisonJob }[] = [];
  /** Until when (performance.now() ms) the worker's legacy client leaves a refusing legacy alone. */
  #pausedUntil = 0;
  /** The accepted differences, sent to each worker as it starts and whenever they change. */
  #rules: readonly AcceptRule[] = [];

  constructor(
    private readonly settings: WorkerSettings,
    private readonly log: Logger,
  ) {}

  /** Starts the worker; resolves once it takes jobs (or failed to start, logged: jobs then start another). */
  ready(): Promise<void> {
    const worker = this.#started();
    return new Promise<void>((resolve) => {
      const done = (): void => {
        worker.off('message', onMessage).off('exit', done);
        resolve();
      };
      const onMessage = (message: VerdictMessage): void => {
        if (message === 'ready') done();
      };
      worker.on('message', onMessage).once('exit', done);
    });
  }

  compare(job: ComparisonJob): Promise<Verdict> {
    return new Promise<Verdict>((resolve) => {
      const id = ++this.#nextId;
      this.#pending.set(id, resolve);
      if (this.#batch.push({ id, job }) === 1) setImmediate(() => this.#post());
    });
  }

  paused(): boolean {
    return this.#pausedUntil > performance.now();
  }

  setRules(rules: readonly AcceptRule[]): void {
    this.#rules = rules;
    this.#worker?.postMessage({ rules } satisfies JobMessage);
  }

  async close(): Promise<void> {
    const worker = this.#worker;
    this.#worker = null;
    if (worker !== null) await worker.terminate();
    this.#settle();
  }

  #post(): void {
    const batch = this.#batch;
    this.#batch = [];
    this.#started().postMessage(batch satisfies JobMessage);
  }

  #started(): Worker {
    if (this.#worker !== null) return this.#worker;
    const worker = new Worker(new URL('./comparison-thread.js', import.meta.url), { workerData: this.settings });
    // Comparisons never keep the process alive: the server does while it runs.
    worker.unref();
    if (this.#rules.length > 0) worker.postMessage({ rules: this.#rules } satisfies JobMessage);
    worker.on('message', (verdicts: VerdictMessage) => {
      if (verdicts === 'ready') return;
      for (const { id, verdict } of verdicts) {
        if (verdict.error !== undefined) this.log.error({ error: verdict.error }, 'shadow: a comparison failed');
        if (verdict.pausedMs !== undefined) this.#pausedUntil = performance.now() + verdict.pausedMs;
        this.#pending.get(id)?.(verdict);
        this.#pending.delete(id);
      }
    });
    worker.on('error', (err) => this.log.error({ err }, 'shadow: the comparison worker failed; a new one starts'));
    worker.on('exit', () => {
      if (this.#worker !== worker) return;
      this.#worker = null;
      this.#settle();
    });
    this.#worker = worker;
    return worker;
  }

  /** Jobs a lost worker took with it: counted skipped, never left waiting. */
  #settle(): void {
    for (const resolve of this.#pending.values()) resolve(LOST);
    this.#pending.clear();
  }
}
