/**
 * Compare mode's background half behind one interface: send the client's request to the legacy
 * service and judge its answer against ours. `InProcessComparer` does it on this thread;
 * `ThreadedComparer` (threaded-comparer.ts) hands it to a worker thread, so the HTTP client and the
 * comparison cost the thread that answers clients almost nothing.
 */
import type { AcceptRule } from './accepted.js';
import { compareWithLegacy } from './comparison.js';
import type { ComparisonJob } from './comparison.js';
import type { Judgement, JudgeRules } from './judgement.js';
import type { LegacyClient } from './legacy-client.js';

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
  compare(job: ComparisonJob): Promise<Verdict>;
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
    rules: JudgeRules,
  ) {
    this.#rules = rules;
  }

  setRules(accept: readonly AcceptRule[]): void {
    this.#rules = { ...this.#rules, accept };
  }

  async ready(): Promise<void> {}

  async compare(job: ComparisonJob): Promise<Verdict> {
    const { judgement, seconds, result } = await compareWithLegacy(job, this.#rules, (f) => this.legacy.send(f));
    const pausedMs = result.ok ? 0 : this.legacy.pausedForMs();
    return pausedMs > 0 ? { judgement, seconds, pausedMs } : { judgement, seconds };
  }

  paused(): boolean {
    return this.legacy.pausedForMs() > 0;
  }

  /** The client is its maker's to close (legacy mode shares it; a worker thread ends with it). */
  async close(): Promise<void> {}
}
