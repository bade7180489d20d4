/**
 * Compare mode's background half behind one interface: send the client's request to the legacy
 * service and judge its answer against ours. `InProcessComparer` does it on this thread;
 * `ThreadedComparer` (threaded-comparer.ts) hands it to a worker thread, so the HTTP client and the
 * comparison cost the thread that answers clients almost nothing.
 */
import type { AcceptRule, ComparisonLabels } from './accepted.js';
import type { Captured } from './capture.js';
import type { JudgedExchange, Judgement, JudgeRules } from './judgement.js';
import { judge, recheckNoise } from './judgement.js';
import type { ForwardRequest, LegacyClient } from './legacy-client.js';
import type { ListPairing } from './xml-diff.js';

export interface CompareJob {
  /** Our answer's labels (those of the metrics and the access log). */
  readonly labels: ComparisonLabels;
  readonly forward: ForwardRequest;
  /** The request as an example shows it (its URL as the client sent it). */
  readonly url: string;
  readonly ours: Captured;
  readonly metadata: boolean;
  readonly personal: boolean;
}

export interface Verdict {
  readonly judgement: Judgement;
  /** The legacy service's answer time, or time to failure (sis_shadow_legacy_seconds). */
  readonly seconds: number;
  /** Why a comparison failed on the worker thread (it is then skipped); logged by the main thread. */
  readonly error?: string;
  /** The legacy service refused connections and is left alone this long from now (see `paused`). */
  readonly pausedMs?: number;
}

export interface Comparer {
  /** Resolves once comparisons can start (never rejects). */
  ready(): Promise<void>;
  /** Never rejects: a failure of the legacy service is a verdict (legacy-failed). */
  compare(job: CompareJob): Promise<Verdict>;
  /**
   * The legacy service refused connections a moment ago and is left alone for a pause: every
   * comparison would fail at once (legacy-failed), so the caller counts it so without a job.
   */
  paused(): boolean;
  /** The accepted differences from now on (they change while the service runs). */
  setRules(rules: readonly AcceptRule[]): void;
  close(): Promise<void>;
}

export class InProcessComparer implements Comparer {
  #rules: JudgeRules;

  constructor(
    private readonly legacy: LegacyClient,
    lists: ListPairing,
    recheck: boolean,
  ) {
    this.#rules = { accept: [], lists, recheck };
  }

  setRules(accept: readonly AcceptRule[]): void {
    this.#rules = { ...this.#rules, accept };
  }

  async ready(): Promise<void> {}

  async compare(job: CompareJob): Promise<Verdict> {
    const result = await this.legacy.send(job.forward);
    const { forward } = job;
    const exchange: JudgedExchange = {
      labels: job.labels,
      request: { method: forward.method, url: job.url, rawHeaders: forward.rawHeaders, body: forward.body },
      ours: job.ours,
      metadata: job.metadata,
      personal: job.personal,
    };
    const rules = this.#rules;
    const judgement = await recheckNoise(judge(result, exchange, rules), result, exchange, rules, forward.write, () =>
      this.legacy.send(forward),
    );
    const verdict = { judgement, seconds: result.ok ? result.answer.seconds : result.seconds };
    const pausedMs = result.ok ? 0 : this.legacy.pausedForMs();
    return pausedMs > 0 ? { ...verdict, pausedMs } : verdict;
  }

  paused(): boolean {
    return this.legacy.pausedForMs() > 0;
  }

  /** The client is its maker's to close (legacy mode shares it; a worker thread ends with it). */
  async close(): Promise<void> {}
}
