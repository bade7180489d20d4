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

  count(
    service: string | null,
    operation: string | null,
    binding: BindingLabel,
    result: ShadowResult,
    kind: string | null = null,
  ): void {
    this.metrics?.compared(service, operation, binding, result);
    const key = `${service ?? ''}\u0000${operation ?? ''}\u0000${binding}\u0000${result}\u0000${kind ?? ''}`;
    const row = this.#counts.get(key);
    if (row !== undefined) row.count++;
    else this.#counts.set(key, { service, operation, binding, result, kind, count: 1 });
  }

  legacyAnswered(seconds: number): void {
    this.metrics?.legacyAnswered(seconds);
  }

  /** Counts the difference and keeps it as an example when there is room (`example` is built only then). */
  different(
    difference: Omit<ShadowDifference, 'example' | 'binding'> & { readonly binding: BindingLabel },
    example: () => ShadowDifference['example'],
  ): void {
    this.count(difference.service, difference.operation, difference.binding, 'different', difference.kind);
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
    if (store === null || this.#counts.size === 0) return;
    const taken = this.#counts;
    this.#counts = new Map();
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
