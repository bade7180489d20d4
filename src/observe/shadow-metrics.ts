/**
 * The metrics of running beside the legacy service (src/shadow): comparisons by result, the
 * legacy service's answer time, legacy mode's fail-overs, comparisons skipped for the in-flight cap;
 * and the legacy service's state, told by each comparison (one line when it stops answering, one
 * when it answers again).
 */
import { Counter, Histogram } from 'prom-client';
import type { Registry } from 'prom-client';
import type { Dependency, Problem } from './dependency-health.js';

/** The legacy service failing comparisons or fail-overs: what each mode does is said by `affects`. */
const LEGACY_FAILING: Problem = {
  what: 'not answering',
  level: 'warn',
  meanwhile: 'check SIS_LEGACY_URL and the legacy service',
};

/** Seconds the legacy service takes to answer (a network hop and another stack: coarser than ours). */
export const LEGACY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30] as const;

/**
 * Comparisons beside the legacy service (src/shadow). prom-client's own children here: a
 * comparison costs a request to another service, far more than a label lookup.
 */
export class ShadowMetrics {
  readonly #comparisons: Counter<'service' | 'operation' | 'binding' | 'result'>;
  readonly #legacy: Histogram;
  readonly #failovers: Counter<'answer'>;
  readonly #overCap: Counter;

  constructor(
    registry: Registry,
    /** The legacy service's state (logged once per change): every comparison's result tells it. */
    private readonly legacyState: Dependency | null = null,
  ) {
    this.#comparisons = new Counter({
      name: 'sis_shadow_comparisons_total',
      help: 'Answers compared with the legacy service, by service file, operation, binding and result (identical, equivalent, accepted, noisy, different, legacy-failed, skipped).',
      labelNames: ['service', 'operation', 'binding', 'result'],
      registers: [registry],
    });
    this.#legacy = new Histogram({
      name: 'sis_shadow_legacy_seconds',
      help: 'Time the legacy service took to answer a request sent to it (its whole answer, or the failure).',
      buckets: [...LEGACY_BUCKETS],
      registers: [registry],
    });
    this.#failovers = new Counter({
      name: 'sis_shadow_failovers_total',
      help: 'Legacy mode: requests the legacy service could not answer, by what the client got instead (ours, or 502).',
      labelNames: ['answer'],
      registers: [registry],
    });
    this.#overCap = new Counter({
      name: 'sis_shadow_over_cap_total',
      help: 'Comparisons not made because SIS_SHADOW_MAX_IN_FLIGHT comparisons were in flight (also counted skipped): the legacy service is slow, or the load too high for the cap.',
      registers: [registry],
    });
  }

  overCap(): void {
    this.#overCap.inc();
  }

  failedOver(answer: 'ours' | 'bad-gateway'): void {
    this.#failovers.inc({ answer });
  }

  compared(service: string | null, operation: string | null, binding: string, result: string): void {
    this.#comparisons.inc({ service: service ?? '', operation: operation ?? '', binding, result });
  }

  /**
   * A call to the legacy service ended: its time, and the service's state. An answer to a call sent
   * before the failure began (a slow one still in flight) says nothing of now, so it ends no failure.
   */
  legacyAnswered(seconds: number, ok: boolean | null): void {
    this.#legacy.observe(seconds);
    if (ok === false) this.legacyState?.failed(LEGACY_FAILING);
    else if (ok === true) this.legacyState?.worked(undefined, Date.now() - seconds * 1000);
  }
}
