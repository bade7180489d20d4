/**
 * Accepted differences (`sis shadow accept`, docs/migrating.md): the kind of a difference as the
 * report names it, the rules that accept a kind or a path, and the rules kept current from the
 * database. Matching is pure, so it runs where the comparison does (the comparison thread in
 * compare mode); the rules reach it whenever they change, within RULES_REFRESH_MS of an operator's
 * `accept` on any instance.
 */
import { createHash } from 'node:crypto';
import type { Logger } from '../logging/logger.js';
import type { ShadowPath, ShadowRule, ShadowStore } from '../store/shadow-types.js';

/** What a comparison is labelled with (service file, operation, binding), as the report shows it. */
export interface ComparisonLabels {
  readonly service: string | null;
  readonly operation: string | null;
  readonly binding: string;
}

/** A rule as matching needs it: its pattern's steps split once. */
export interface AcceptRule {
  readonly id: number;
  readonly kind: string | null;
  readonly steps: readonly string[] | null;
  readonly service: string | null;
  readonly operation: string | null;
  readonly binding: string | null;
}

/** A position (`[2]`) or a key (`[id_student="17"]`) in a path step. */
const PREDICATE = /\[(?:\d+|[\w.-]+="(?:[^"\\]|\\.)*")\]/g;

/** A path without positions or keys: what kinds and patterns compare. */
export function shapeOf(path: string): string {
  return path.replace(PREDICATE, '');
}

/**
 * The stable id of a kind of difference: its service file, operation, binding and the set of its
 * paths without positions or keys, so the same fault in every row is one kind.
 */
export function kindOf(labels: ComparisonLabels, paths: readonly ShadowPath[]): string {
  const shapes = [...new Set(paths.map((p) => shapeOf(p.path)))].sort();
  return createHash('sha256')
    .update(JSON.stringify([labels.service, labels.operation, labels.binding, shapes]))
    .digest('hex')
    .slice(0, 16);
}

export const KIND_ID = /^[0-9a-f]{16}$/;

/** Whether a path pattern is one `accept --path` takes; the reason when it is not. */
export function patternProblem(pattern: string): string | null {
  if (pattern.trim() === '') return 'an empty pattern';
  if (/[[\]]/.test(pattern)) return 'no positions or keys in a pattern ([…]): a step matches whatever they are';
  return null;
}

export function compileRules(rules: readonly ShadowRule[]): AcceptRule[] {
  return rules.map((r) => ({
    id: r.id,
    kind: r.kind,
    steps: r.path === null ? null : r.path.split('/'),
    service: r.service,
    operation: r.operation,
    binding: r.binding,
  }));
}

export interface Accepted {
  /** The paths no rule accepts (empty: the comparison is accepted). */
  readonly paths: readonly ShadowPath[];
  /** The kind made of those paths (null when none is left). */
  readonly kind: string | null;
  /** The rules that accepted something, for their hits. */
  readonly matched: readonly number[];
}

/** Applies the path rules to each path, then the kind rules to the kind of what is left. */
export function applyRules(
  labels: ComparisonLabels,
  paths: readonly ShadowPath[],
  rules: readonly AcceptRule[],
): Accepted {
  const matched = new Set<number>();
  let left = paths;
  const pathRules = rules.filter((r) => r.steps !== null && appliesTo(r, labels));
  if (pathRules.length > 0) {
    left = paths.filter((p) => {
      const steps = shapeOf(p.path).split('/');
      const rule = pathRules.find((r) => stepsMatch(r.steps!, steps));
      if (rule === undefined) return true;
      matched.add(rule.id);
      return false;
    });
  }
  if (left.length === 0) return { paths: left, kind: null, matched: [...matched] };
  const kind = kindOf(labels, left);
  const kindRule = rules.find((r) => r.kind === kind);
  if (kindRule === undefined) return { paths: left, kind, matched: [...matched] };
  matched.add(kindRule.id);
  return { paths: [], kind: null, matched: [...matched] };
}

function appliesTo(rule: AcceptRule, labels: ComparisonLabels): boolean {
  return (
    (rule.service === null || rule.service.toLowerCase() === (labels.service ?? '').toLowerCase()) &&
    (rule.operation === null || rule.operation === labels.operation) &&
    (rule.binding === null || rule.binding === labels.binding)
  );
}

/** `*` matches one step; every other step matches itself. */
function stepsMatch(pattern: readonly string[], steps: readonly string[]): boolean {
  return pattern.length === steps.length && pattern.every((p, i) => p === '*' || p === steps[i]);
}

/** How often an instance reads the rules: an `accept` is in effect everywhere within this. */
export const RULES_REFRESH_MS = 2000;

/**
 * The rules as the database holds them, read every RULES_REFRESH_MS (a timer that does not hold
 * the process); `onChange` is told the compiled rules when they differ from the last read.
 */
export class RuleWatch {
  #current: readonly AcceptRule[] = [];
  #seen = '[]';
  #timer: NodeJS.Timeout | undefined;
  #failing = false;

  constructor(
    private readonly store: ShadowStore,
    private readonly log: Logger,
    private readonly onChange: (rules: readonly AcceptRule[]) => void,
  ) {}

  get current(): readonly AcceptRule[] {
    return this.#current;
  }

  /** Reads the rules once now, then every RULES_REFRESH_MS. */
  async start(): Promise<void> {
    await this.refresh();
    this.#timer = setInterval(() => void this.refresh(), RULES_REFRESH_MS);
    this.#timer.unref();
  }

  stop(): void {
    clearInterval(this.#timer);
  }

  async refresh(): Promise<void> {
    try {
      const rules = compileRules(await this.store.rules());
      const seen = JSON.stringify(rules);
      if (this.#failing) this.log.info('shadow: accepted differences are read again');
      this.#failing = false;
      if (seen === this.#seen) return;
      this.#seen = seen;
      this.#current = rules;
      this.onChange(rules);
    } catch (err) {
      if (!this.#failing) this.log.warn({ err }, 'shadow: accepted differences could not be read; the last ones apply');
      this.#failing = true;
    }
  }
}
