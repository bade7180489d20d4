/**
 * `sis shadow report`: the counts since a time per service, operation, binding and result, then
 * each kind of difference with its count and one example. The JSON shape is the one documented in
 * docs/migrating.md; the text is the same, for a terminal. A kind accepted since it was counted
 * (`sis shadow accept --kind`) is reported `accepted` from then on, its past counts included.
 */
import type { ShadowExample, ShadowResult, ShadowStore } from '../store/shadow-types.js';
import { SHADOW_RESULTS } from '../store/shadow-types.js';

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
  for (const c of counts) {
    totals[c.result] += c.count;
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
    groups: [...groups.values()],
    differences: listed(false),
    noisy: listed(true),
  };
}

/** The cut-over gate's limits (`sis shadow report --check`). */
export interface GateLimits {
  readonly maxLegacyFailed: number;
  readonly maxNoisy: number;
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
  return reasons;
}

/** Characters of a body shown in the text report (the JSON has what was kept). */
const SHOWN_BODY = 2000;

export function reportText(report: ShadowReport): string {
  const name = (v: string | null): string => v ?? '-';
  let text = `Comparisons since ${report.since}\n`;
  text += `${SHADOW_RESULTS.map((r) => `${r}\t${report.totals[r]}`).join('\n')}\n\n`;
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
