/**
 * `sis shadow report`: the counts since a time per service, operation, binding and result, then
 * each kind of difference with its count and one example. The JSON shape is the one documented in
 * docs/migrating.md; the text is the same, for a terminal. A kind accepted since it was counted
 * (`sis shadow accept --kind`) is reported `accepted` from then on, its past counts included.
 */
import type { Operation } from '../operations/index.js';
import type { ShadowExample, ShadowResult, ShadowStore } from '../store/shadow-types.js';
import { SHADOW_RESULTS } from '../store/shadow-types.js';
import { OVER_CAP } from './recorder.js';

/** One kind of difference (or of noise) with its count and an example. */
export interface ReportedKind {
  readonly service: string | null;
  readonly operation: string | null;
  readonly binding: string;
  /** The kind's stable id, as `sis shadow accept --kind` takes it. */
  readonly kind: string;
  readonly count: number;
  /** Null when none was kept (SIS_SHADOW_KEEP reached, or pruned). */
  readonly example: ShadowExample | null;
}

export interface ShadowReport {
  readonly since: string;
  readonly totals: Readonly<Record<ShadowResult, number>>;
  /** Of the `skipped`, those skipped because SIS_SHADOW_MAX_IN_FLIGHT comparisons were in flight. */
  readonly overCap: number;
  readonly groups: readonly {
    readonly service: string | null;
    readonly operation: string | null;
    readonly binding: string;
    /** The mode the results were taken in (`legacy`, `compare`; null before modes were kept). */
    readonly mode: string | null;
    readonly result: ShadowResult;
    readonly count: number;
  }[];
  readonly differences: readonly ReportedKind[];
  /** Kinds counted `noisy` (the legacy's own answers moving there), apart from the differences. */
  readonly noisy: readonly ReportedKind[];
}

export interface ReportFilter {
  /** Only this operation's comparisons (null: all). */
  readonly operation?: string | null;
}

export async function buildReport(store: ShadowStore, since: Date, filter: ReportFilter = {}): Promise<ShadowReport> {
  const only = filter.operation ?? null;
  const acceptedKinds = new Set((await store.rules()).flatMap((r) => (r.kind === null ? [] : [r.kind])));
  const counts = (await store.counts(since)).flatMap((c) =>
    only !== null && c.operation !== only
      ? []
      : [
          (c.result === 'different' || c.result === 'noisy') && c.kind !== null && acceptedKinds.has(c.kind)
            ? { ...c, result: 'accepted' as const, kind: null }
            : c,
        ],
  );
  const examples = await store.examples(since);
  const totals = Object.fromEntries(SHADOW_RESULTS.map((r) => [r, 0])) as Record<ShadowResult, number>;
  const groups = new Map<
    string,
    {
      service: string | null;
      operation: string | null;
      binding: string;
      mode: string | null;
      result: ShadowResult;
      count: number;
    }
  >();
  const kinds = new Map<string, { -readonly [K in keyof ReportedKind]: ReportedKind[K] } & { noisy: boolean }>();
  const keyOf = (...parts: (string | null)[]): string => JSON.stringify(parts);
  let overCap = 0;
  for (const c of counts) {
    totals[c.result] += c.count;
    if (c.result === 'skipped' && c.kind === OVER_CAP) overCap += c.count;
    const group = keyOf(c.service, c.operation, c.binding, c.mode, c.result);
    const g = groups.get(group);
    if (g === undefined)
      groups.set(group, {
        service: c.service,
        operation: c.operation,
        binding: c.binding,
        mode: c.mode,
        result: c.result,
        count: c.count,
      });
    else g.count += c.count;
    if ((c.result !== 'different' && c.result !== 'noisy') || c.kind === null) continue;
    const noisy = c.result === 'noisy';
    const kind = keyOf(c.service, c.operation, c.binding, c.kind, c.result);
    const k = kinds.get(kind);
    if (k === undefined)
      kinds.set(kind, {
        service: c.service,
        operation: c.operation,
        binding: c.binding,
        kind: c.kind,
        count: c.count,
        example: null,
        noisy,
      });
    else k.count += c.count;
  }
  for (const e of examples)
    for (const result of ['different', 'noisy']) {
      const k = kinds.get(keyOf(e.service, e.operation, e.binding, e.kind, result));
      if (k !== undefined) k.example ??= e.example;
    }
  const listed = (noisy: boolean): ReportedKind[] =>
    [...kinds.values()]
      .filter((k) => k.noisy === noisy)
      .sort((a, b) => b.count - a.count)
      .map(({ service, operation, binding, kind, count, example }) => ({
        service,
        operation,
        binding,
        kind,
        count,
        example,
      }));
  return {
    since: since.toISOString(),
    totals,
    overCap,
    groups: [...groups.values()],
    differences: listed(false),
    noisy: listed(true),
  };
}

/** The cut-over gate's limits (`sis shadow report --check`). */
export interface GateLimits {
  readonly maxLegacyFailed: number;
  readonly maxNoisy: number;
  /** Comparisons skipped for the in-flight cap allowed: traffic the gate never saw (--max-over-cap). */
  readonly maxOverCap: number;
}

/** Why the window does not pass the cut-over gate, one line each; none when it does. */
export function gateReasons(report: ShadowReport, limits: GateLimits): string[] {
  const reasons: string[] = [];
  const name = (v: string | null): string => v ?? '-';
  for (const d of report.differences)
    reasons.push(
      `different: ${name(d.service)} ${name(d.operation)} ${d.binding}, kind ${d.kind}, ${d.count} time${d.count === 1 ? '' : 's'} (fix it, or sis shadow accept --kind ${d.kind})`,
    );
  const listed = report.differences.reduce((n, d) => n + d.count, 0);
  if (report.totals.different > listed)
    reasons.push(`different: ${report.totals.different - listed} comparisons of no recorded kind`);
  const noisy = report.totals.noisy;
  if (noisy > limits.maxNoisy)
    reasons.push(
      `noisy: ${noisy} comparison${noisy === 1 ? '' : 's'}, over ${limits.maxNoisy} (--max-noisy; sis shadow report lists their kinds)`,
    );
  const failed = report.totals['legacy-failed'];
  if (failed > limits.maxLegacyFailed)
    reasons.push(
      `legacy-failed: ${failed} comparison${failed === 1 ? '' : 's'}, over ${limits.maxLegacyFailed} (--max-legacy-failed)`,
    );
  const overCap = report.overCap;
  if (overCap > limits.maxOverCap)
    reasons.push(
      `skipped: ${overCap} comparison${overCap === 1 ? '' : 's'} not made for the in-flight cap (SIS_SHADOW_MAX_IN_FLIGHT), over ${limits.maxOverCap} (--max-over-cap): the window holds traffic that was never compared`,
    );
  return reasons;
}

/** The struct fields the contract marks personal (StudentInfo's `fullName`), by name. */
export function personalFields(operations: readonly Operation[]): ReadonlySet<string> {
  const fields = new Set<string>();
  for (const op of operations) {
    const struct = op.result.kind === 'list' ? op.result.item : op.result.kind === 'struct' ? op.result.struct : null;
    for (const field of struct?.personal ?? []) fields.add(field);
  }
  return fields;
}

/**
 * The report as shown by default: every value of a personal field in the kept answers and paths
 * masked, each word's first letter kept (`--show-personal` shows them, for an operator on the
 * database's own machine).
 */
export function withoutPersonal(report: ShadowReport, fields: ReadonlySet<string>): ShadowReport {
  if (fields.size === 0) return report;
  const names = [...fields].map((f) => f.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&')).join('|');
  const element = new RegExp(`(<(?:[\\w.-]+:)?(?:${names})\\b[^>/]*>)([^<]*)(</)`, 'g');
  const text = (t: string): string =>
    t.replace(element, (_m, open: string, v: string, close: string) => `${open}${maskName(v)}${close}`);
  const lastStep = (path: string): string => path.slice(path.lastIndexOf('/') + 1).replace(/\[.*$/, '');
  const example = (e: ShadowExample | null): ShadowExample | null =>
    e === null
      ? null
      : {
          ...e,
          legacy: { ...e.legacy, body: text(e.legacy.body) },
          ours: { ...e.ours, body: text(e.ours.body) },
          paths: e.paths.map((p) => {
            const mask = fields.has(lastStep(p.path)) ? maskName : text;
            return {
              ...p,
              legacy: p.legacy === null ? null : mask(p.legacy),
              ours: p.ours === null ? null : mask(p.ours),
            };
          }),
        };
  const kinds = (list: readonly ReportedKind[]): ReportedKind[] =>
    list.map((k) => ({ ...k, example: example(k.example) }));
  return { ...report, differences: kinds(report.differences), noisy: kinds(report.noisy) };
}

/** Each word's first letter, the rest as stars: enough to see where two names part, not to read one. */
function maskName(value: string): string {
  return value.replace(
    /(\p{L})([\p{L}\p{M}'-]*)/gu,
    (_m, first: string, rest: string) => `${first}${'*'.repeat([...rest].length)}`,
  );
}

/** Characters of a body shown in the text report (the JSON has what was kept). */
const SHOWN_BODY = 2000;

export function reportText(report: ShadowReport): string {
  return terminalSafe(plainText(report));
}

/**
 * Control characters (an ESC sequence, a bare CR, a bidirectional override) from a request or a
 * legacy answer shown escaped (`\x1b`, `\u202e`): a client cannot clear the operator's screen or
 * rewrite what the report seems to say. Line ends and tabs stay.
 */
export function terminalSafe(text: string): string {
  // eslint-disable-next-line no-control-regex -- control characters are what this escapes
  return text.replace(/\r(?!\n)|[\x00-\x08\x0b-\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g, (c) => {
    const code = c.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}

function plainText(report: ShadowReport): string {
  const name = (v: string | null): string => v ?? '-';
  let text = `Comparisons since ${report.since}\n`;
  text += `${SHADOW_RESULTS.map((r) => `${r}\t${report.totals[r]}`).join('\n')}\n`;
  if (report.overCap > 0)
    text += `(of the skipped, ${report.overCap} for the in-flight cap, SIS_SHADOW_MAX_IN_FLIGHT)\n`;
  text += '\n';
  text += 'service\toperation\tbinding\tmode\tresult\tcount\n';
  for (const g of report.groups)
    text += `${name(g.service)}\t${name(g.operation)}\t${g.binding}\t${name(g.mode)}\t${g.result}\t${g.count}\n`;
  text += kindsText(report.differences, 'difference');
  if (report.noisy.length > 0) text += kindsText(report.noisy, 'noise (the legacy answered two ways)');
  return text;
}

function kindsText(kinds: readonly ReportedKind[], what: string): string {
  const name = (v: string | null): string => v ?? '-';
  let text = `\n${kinds.length} kind${kinds.length === 1 ? '' : 's'} of ${what}\n`;
  kinds.forEach((d, i) => {
    text += `\n${i + 1}. ${name(d.service)} ${name(d.operation)} ${d.binding}: ${d.count} time${d.count === 1 ? '' : 's'} (kind ${d.kind})\n`;
    const e = d.example;
    if (e === null) {
      text += '   (no example kept)\n';
      return;
    }
    for (const p of e.paths) text += `   ${p.path}\n     legacy: ${show(p.legacy)}\n     ours:   ${show(p.ours)}\n`;
    text += `   request: ${e.request.method} ${e.request.path}\n`;
    for (const [h, v] of e.request.headers) text += `     ${h}: ${v}\n`;
    if (e.request.body !== '') text += indent(cut(e.request.body));
    for (const [side, a] of [
      ['legacy', e.legacy],
      ['ours', e.ours],
    ] as const)
      text += `   ${side} answer: ${a.status} ${a.contentType ?? '(no content type)'}\n${a.body === '' ? '' : indent(cut(a.body))}`;
  });
  return text;
}

const show = (v: string | null): string => (v === null ? '(absent)' : JSON.stringify(v));
const cut = (s: string): string =>
  s.length <= SHOWN_BODY ? s : `${s.slice(0, SHOWN_BODY)}… (${s.length} characters; --json shows all that was kept)`;
const indent = (s: string): string =>
  `${s
    .split('\n')
    .map((l) => `     ${l}`)
    .join('\n')}\n`;
