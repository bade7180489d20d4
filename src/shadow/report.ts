/**
 * `sis shadow report`: the counts since a time per service, operation, binding and result, then
 * each kind of difference with its count and one example. The JSON shape is the one documented in
 * docs/migrating.md; the text is the same, for a terminal. A kind accepted since it was counted
 * (`sis shadow accept --kind`) is reported `accepted` from then on, its past counts included.
 */
import type { ShadowExample, ShadowResult, ShadowStore } from '../store/shadow-types.js';
import { SHADOW_RESULTS } from '../store/shadow-types.js';

export interface ShadowReport {
  readonly since: string;
  readonly totals: Readonly<Record<ShadowResult, number>>;
  readonly groups: readonly {
    readonly service: string | null;
    readonly operation: string | null;
    readonly binding: string;
    readonly result: ShadowResult;
    readonly count: number;
  }[];
  readonly differences: readonly {
    readonly service: string | null;
    readonly operation: string | null;
    readonly binding: string;
    /** The kind's stable id, as `sis shadow accept --kind` takes it. */
    readonly kind: string;
    readonly count: number;
    /** Null when none was kept (SIS_SHADOW_KEEP reached, or pruned). */
    readonly example: ShadowExample | null;
  }[];
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
          c.result === 'different' && c.kind !== null && acceptedKinds.has(c.kind)
            ? { ...c, result: 'accepted' as const, kind: null }
            : c,
        ],
  );
  const examples = await store.examples(since);
  const totals = Object.fromEntries(SHADOW_RESULTS.map((r) => [r, 0])) as Record<ShadowResult, number>;
  const groups = new Map<
    string,
    { service: string | null; operation: string | null; binding: string; result: ShadowResult; count: number }
  >();
  const kinds = new Map<
    string,
    {
      service: string | null;
      operation: string | null;
      binding: string;
      kind: string;
      count: number;
      example: ShadowExample | null;
    }
  >();
  const keyOf = (...parts: (string | null)[]): string => JSON.stringify(parts);
  for (const c of counts) {
    totals[c.result] += c.count;
    const group = keyOf(c.service, c.operation, c.binding, c.result);
    const g = groups.get(group);
    if (g === undefined)
      groups.set(group, {
        service: c.service,
        operation: c.operation,
        binding: c.binding,
        result: c.result,
        count: c.count,
      });
    else g.count += c.count;
    if (c.result !== 'different' || c.kind === null) continue;
    const kind = keyOf(c.service, c.operation, c.binding, c.kind);
    const k = kinds.get(kind);
    if (k === undefined)
      kinds.set(kind, {
        service: c.service,
        operation: c.operation,
        binding: c.binding,
        kind: c.kind,
        count: c.count,
        example: null,
      });
    else k.count += c.count;
  }
  for (const e of examples) {
    const k = kinds.get(keyOf(e.service, e.operation, e.binding, e.kind));
    if (k !== undefined) k.example ??= e.example;
  }
  return {
    since: since.toISOString(),
    totals,
    groups: [...groups.values()],
    differences: [...kinds.values()].sort((a, b) => b.count - a.count),
  };
}

/** The cut-over gate's limits (`sis shadow report --check`). */
export interface GateLimits {
  readonly maxLegacyFailed: number;
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
  text += 'service\toperation\tbinding\tresult\tcount\n';
  for (const g of report.groups)
    text += `${name(g.service)}\t${name(g.operation)}\t${g.binding}\t${g.result}\t${g.count}\n`;
  text += `\n${report.differences.length} kind${report.differences.length === 1 ? '' : 's'} of difference\n`;
  report.differences.forEach((d, i) => {
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
