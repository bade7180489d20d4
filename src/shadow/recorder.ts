/**
 * Where comparisons go: the metrics at once; the counts gathered in memory and added to the
 * database every `flushMs` and at stop (a write per request would cost more than the comparison);
 * differences kept as examples, bounded in the database (SIS_SHADOW_KEEP, 20 per kind) and here
 * (a kind known full is not asked again until the next flush, and few keeps run at once).
 */
import type { BindingName } from '../bindings/types.js';
import type { Logger } from '../logging/logger.js';
import type { ShadowMetrics } from '../observe/shadow-metrics.js';
import type { ShadowCount, ShadowDifference, ShadowResult, ShadowStore } from '../store/shadow-types.js';

/**
 * As reports and metrics name a comparison's binding: the binding that answered, or `metadata`
 * for what is answered before a binding is chosen (WSDL, disco, help pages, 404, 405).
 */
export type BindingLabel = BindingName | 'metadata';

/** What a comparison is counted under: its labels, and the mode it was taken in. */
export interface CountLabels {
  readonly service: string | null;
  readonly operation: string | null;
  readonly binding: BindingLabel;
  readonly mode: 'legacy' | 'compare';
}

/**
 * The kind a `skipped` count carries when the copy was not sent because SIS_SHADOW_MAX_IN_FLIGHT
 * comparisons were in flight (the report's `overCap`, the gate's --max-over-cap); other skips have none.
 */
export const OVER_CAP = 'in-flight-cap';

/** Examples of one operation, binding and kind of difference, at most. */
export const PER_KIND = 20;
/** Keeps in progress at once; beyond, a difference is counted but not kept. */
const MAX_KEEPING = 4;

export interface RecorderOptions {
  readonly keep: number;
  readonly flushMs: number;
}

export class ShadowRecorder {
  #counts = new Map<string, { -readonly [K in keyof ShadowCount]: ShadowCount[K] }>();
  /** Comparisons each accepted difference's rule matched since the last flush, by rule id. */
  #hits = new Map<number, number>();
  #full = new Set<string>();
  #keeping = 0;
  #timer: NodeJS.Timeout | undefined;
  #flushing: Promise<void> | null = null;
  #failing = false;

  constructor(
    private readonly store: ShadowStore | null,
    private readonly metrics: ShadowMetrics | null,
    private readonly log: Logger,
    private readonly options: RecorderOptions,
  ) {}

  start(): void {
    this.#timer = setInterval(() => void this.flush(), this.options.flushMs);
    this.#timer.unref();
  }

  /** Stops the timer and adds what is counted so far. */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await this.flush();
  }

  count(labels: CountLabels, result: ShadowResult, kind: string | null = null): void {
    const { service, operation, binding, mode } = labels;
    this.metrics?.compared(service, operation, binding, result);
    if (kind === OVER_CAP) this.metrics?.overCap();
    const key = `${service ?? ''}\u0000${operation ?? ''}\u0000${binding}\u0000${mode}\u0000${result}\u0000${kind ?? ''}`;
    const row = this.#counts.get(key);
    if (row !== undefined) row.count++;
    else this.#counts.set(key, { service, operation, binding, mode, result, kind, count: 1 });
  }

  ruleHits(ids: readonly number[]): void {
    for (const id of ids) this.#hits.set(id, (this.#hits.get(id) ?? 0) + 1);
  }

  /** One call to the legacy service ended after `seconds`, answered (`ok`), failed, or null: not known. */
  legacyAnswered(seconds: number, ok: boolean | null): void {
    this.metrics?.legacyAnswered(seconds, ok);
  }

  /** Counts the difference (or noise) and keeps it as an example when there is room (`example` is built only then). */
  different(
    labels: CountLabels,
    kind: string,
    example: () => ShadowDifference['example'],
    result: 'different' | 'noisy' = 'different',
  ): void {
    this.count(labels, result, kind);
    const difference = { service: labels.service, operation: labels.operation, binding: labels.binding, kind };
    const store = this.store;
    const kindKey = `${difference.service ?? ''}\u0000${difference.operation ?? ''}\u0000${difference.binding}\u0000${difference.kind}`;
    if (store === null || this.#full.has(kindKey) || this.#keeping >= MAX_KEEPING || this.options.keep === 0) return;
    this.#keeping++;
    store
      .keepDifference({ ...difference, example: example() }, new Date(), {
        total: this.options.keep,
        perKind: PER_KIND,
      })
      .then(
        (kept) => {
          if (!kept) this.#full.add(kindKey);
        },
        (err: unknown) => this.log.warn({ err }, 'shadow: a difference could not be kept (it is counted)'),
      )
      .finally(() => this.#keeping--);
  }

  /** Adds the counts gathered so far to the database (put back for the next flush if that fails). */
  flush(): Promise<void> {
    this.#flushing ??= this.#flush().finally(() => (this.#flushing = null));
    return this.#flushing;
  }

  async #flush(): Promise<void> {
    // Kinds full at the last look may have room again (retention, `sis shadow reset`).
    this.#full.clear();
    const store = this.store;
    if (store === null || (this.#counts.size === 0 && this.#hits.size === 0)) return;
    const taken = this.#counts;
    this.#counts = new Map();
    // Hits are a rule's tally for an operator, not a record: lost, not retried, if the write fails.
    const hits = this.#hits;
    this.#hits = new Map();
    store.addRuleHits(hits).catch((err: unknown) => this.log.warn({ err }, 'shadow: rule hits could not be stored'));
    try {
      await store.addCounts(new Date(), [...taken.values()]);
      if (this.#failing) this.log.info('shadow: comparison counts are stored again');
      this.#failing = false;
    } catch (err) {
      for (const [key, row] of taken) {
        const now = this.#counts.get(key);
        if (now === undefined) this.#counts.set(key, row);
        else now.count += row.count;
      }
      if (!this.#failing)
        this.log.warn({ err }, 'shadow: comparison counts could not be stored; kept in memory, retried');
      this.#failing = true;
    }
  }
}
