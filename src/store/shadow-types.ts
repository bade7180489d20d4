/**
 * What the store keeps of the comparisons beside the legacy service (src/shadow): counts shared
 * by every instance on one database, and a bounded set of example differences. The shadow decides
 * what to count and keep; the store only adds, bounds, reports and prunes.
 */

/**
 * How one comparison ended (`accepted`: every path where it differed is an accepted difference;
 * `noisy`: different where the legacy's own two answers differ).
 */
export type ShadowResult =
  'identical' | 'equivalent' | 'accepted' | 'noisy' | 'different' | 'legacy-failed' | 'skipped';

export const SHADOW_RESULTS: readonly ShadowResult[] = [
  'identical',
  'equivalent',
  'accepted',
  'noisy',
  'different',
  'legacy-failed',
  'skipped',
];

/**
 * An accepted difference (`sis shadow accept`): a kind as the report names it, or a path pattern
 * (`*` one step, no positions or keys) within an optional service file, operation and binding.
 */
export interface ShadowRuleSpec {
  readonly kind: string | null;
  readonly path: string | null;
  readonly service: string | null;
  readonly operation: string | null;
  readonly binding: string | null;
  readonly note: string;
}

export interface ShadowRule extends ShadowRuleSpec {
  readonly id: number;
  readonly createdAt: string;
  /** Comparisons it accepted, from every instance. */
  readonly hits: number;
}

/** Comparisons of one group; null where there is none (a request naming no service or operation). */
export interface ShadowCount {
  readonly service: string | null;
  readonly operation: string | null;
  readonly binding: string;
  /** The mode it was taken in (`legacy`, `compare`); null for counts from before modes were kept. */
  readonly mode: string | null;
  readonly result: ShadowResult;
  /** The kind of difference for `different` and `noisy` (a digest of its paths), else null. */
  readonly kind: string | null;
  readonly count: number;
}

/** A request or an answer as kept: headers and bodies as text, personal data already masked. */
export interface ShadowExample {
  readonly request: {
    readonly method: string;
    readonly path: string;
    readonly headers: readonly (readonly [string, string])[];
    readonly body: string;
  };
  readonly legacy: ShadowAnswer;
  readonly ours: ShadowAnswer;
  readonly paths: readonly ShadowPath[];
}

export interface ShadowAnswer {
  readonly status: number;
  readonly contentType: string | null;
  readonly body: string;
}

/** Where two answers part: `status`, `header:Name`, `body`, or an XML path; values null where absent. */
export interface ShadowPath {
  readonly path: string;
  readonly legacy: string | null;
  readonly ours: string | null;
}

export interface ShadowDifference {
  readonly service: string | null;
  readonly operation: string | null;
  readonly binding: string;
  readonly kind: string;
  readonly example: ShadowExample;
}

/** One kind of difference since a time, with its first kept example (null when none was kept). */
export interface ShadowKindExample {
  readonly service: string | null;
  readonly operation: string | null;
  readonly binding: string;
  readonly kind: string;
  readonly example: ShadowExample;
}

export interface ShadowStore {
  /** Adds counts to the minute `bucket` (start of a minute), in one transaction. */
  addCounts(bucket: Date, counts: readonly ShadowCount[]): Promise<void>;
  /**
   * Keeps a difference unless `total` are kept already, or `perKind` of its operation, binding and
   * kind; returns whether it was kept.
   */
  keepDifference(difference: ShadowDifference, at: Date, limits: { total: number; perKind: number }): Promise<boolean>;
  /** Counts summed over the minutes from the one holding `since`. */
  counts(since: Date): Promise<ShadowCount[]>;
  /** Counts per hour (`YYYY-MM-DDTHH`, UTC), operation and result, from the minute holding `since`. */
  hourly(since: Date): Promise<{ hour: string; operation: string | null; result: ShadowResult; count: number }[]>;
  /** The first example kept of each kind since `since`. */
  examples(since: Date): Promise<ShadowKindExample[]>;
  /** Adds a rule; returns its id. */
  addRule(rule: ShadowRuleSpec, at: Date): Promise<number>;
  /** Every rule, oldest first, with its hits. */
  rules(): Promise<ShadowRule[]>;
  /** Removes one rule; false when there is none of that id. */
  removeRule(id: number): Promise<boolean>;
  /** Adds comparisons accepted to each rule's hits (a rule removed meanwhile is passed over). */
  addRuleHits(hits: ReadonlyMap<number, number>): Promise<void>;
  /** Removes every count and example; returns the examples removed. */
  reset(): Promise<number>;
  /** Removes up to `limit` examples, and up to `limit` minutes of counts, older than `before`; returns how many rows. */
  prune(before: Date, limit: number): Promise<number>;
}
