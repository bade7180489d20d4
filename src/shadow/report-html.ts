/**
 * `sis shadow report --html FILE`: the report as one self-contained page (no external resource:
 * styles inline, the chart an inline SVG): the totals, results per operation per hour, each kind
 * of difference (and of noise) with both answers side by side and the differing values marked,
 * and the accepted differences with their notes and hits. What it shows is what the JSON holds:
 * personal data masked before it was kept.
 */
import type { ShadowResult, ShadowRule } from '../store/shadow-types.js';
import { SHADOW_RESULTS } from '../store/shadow-types.js';
import { escapeHtml } from '../xml/escape.js';
import type { ReportedKind, ShadowReport } from './report.js';

/** Results of one operation in one hour (the chart's bars). */
export interface HourlyCount {
  readonly hour: string;
  readonly operation: string | null;
  readonly result: ShadowResult;
  readonly count: number;
}

const COLOURS: Readonly<Record<ShadowResult, string>> = {
  identical: '#2e7d32',
  equivalent: '#66bb6a',
  accepted: '#90caf9',
  noisy: '#ffb74d',
  different: '#e53935',
  'legacy-failed': '#8e24aa',
  skipped: '#bdbdbd',
};

/** Characters of an answer shown: the page stays readable; the JSON has all that was kept. */
const SHOWN = 20_000;

export function reportHtml(report: ShadowReport, hourly: readonly HourlyCount[], rules: readonly ShadowRule[]): string {
  const e = escapeHtml;
  const totals = SHADOW_RESULTS.map(
    (r) =>
      `<tr><td><span class="swatch" style="background:${COLOURS[r]}"></span>${r}</td><td class="n">${report.totals[r]}</td></tr>`,
  ).join('');
  const kinds = (list: readonly ReportedKind[], what: string): string =>
    list.length === 0 ? `<p class="none">No ${what}.</p>` : list.map((k, i) => kindSection(k, i + 1)).join('');
  const ruleRows = rules
    .map(
      (r) =>
        `<tr><td>${r.id}</td><td>${r.kind === null ? `path <code>${e(r.path ?? '')}</code>${within(r)}` : `kind <code>${e(r.kind)}</code>`}</td><td class="n">${r.hits}</td><td>${e(r.note)}</td></tr>`,
    )
    .join('');
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Comparisons with the legacy service</title>
<style>${STYLE}</style></head><body>
<h1>Comparisons with the legacy service</h1>
<p>Since ${e(report.since)}.</p>
<section id="totals"><h2>Totals</h2><table>${totals}</table></section>
<section id="hourly"><h2>Results per operation per hour</h2>${chart(hourly)}</section>
<section id="differences"><h2>Differences</h2>${kinds(report.differences, 'differences')}</section>
<section id="noise"><h2>Noise</h2>${kinds(report.noisy, 'noise')}</section>
<section id="rules"><h2>Accepted differences</h2>${
    rules.length === 0
      ? '<p class="none">No accepted differences.</p>'
      : `<table><tr><th>id</th><th>accepts</th><th>hits</th><th>note</th></tr>${ruleRows}</table>`
  }</section>
</body></html>
`;
}

function within(rule: ShadowRule): string {
  const parts = [rule.service, rule.operation, rule.binding].filter((v) => v !== null);
  return parts.length === 0 ? '' : ` in ${escapeHtml(parts.join(' '))}`;
}

/** One kind: its paths, then the request and both answers side by side, differing values marked. */
function kindSection(k: ReportedKind, n: number): string {
  const e = escapeHtml;
  const head = `<h3>${n}. ${e(k.service ?? '-')} ${e(k.operation ?? '-')} ${e(k.binding)}: ${k.count} time${k.count === 1 ? '' : 's'} <code class="kind">${e(k.kind)}</code></h3>`;
  const x = k.example;
  if (x === null) return `<article class="kind">${head}<p class="none">No example kept.</p></article>`;
  const paths = x.paths
    .map(
      (p) =>
        `<tr><td><code>${e(p.path)}</code></td><td><mark>${show(p.legacy)}</mark></td><td><mark>${show(p.ours)}</mark></td></tr>`,
    )
    .join('');
  const legacyValues = x.paths.flatMap((p) => (p.legacy === null ? [] : [p.legacy]));
  const ourValues = x.paths.flatMap((p) => (p.ours === null ? [] : [p.ours]));
  return `<article class="kind">${head}
<table class="paths"><tr><th>path</th><th>legacy</th><th>ours</th></tr>${paths}</table>
<p class="request"><code>${e(x.request.method)} ${e(x.request.path)}</code></p>
<div class="sides"><div><h4>legacy: ${x.legacy.status} ${e(x.legacy.contentType ?? '')}</h4><pre>${marked(x.legacy.body, legacyValues)}</pre></div>
<div><h4>ours: ${x.ours.status} ${e(x.ours.contentType ?? '')}</h4><pre>${marked(x.ours.body, ourValues)}</pre></div></div>
</article>`;
}

const show = (value: string | null): string => (value === null ? '<i>(absent)</i>' : escapeHtml(value));

/** The body escaped, each differing value found in it marked. */
function marked(body: string, values: readonly string[]): string {
  const text = body.length > SHOWN ? `${body.slice(0, SHOWN)}…` : body;
  const escaped = escapeHtml(text);
  const found = [...new Set(values.map(escapeHtml))].filter((v) => v.length > 0 && escaped.includes(v));
  if (found.length === 0) return escaped;
  found.sort((a, b) => b.length - a.length);
  const pattern = new RegExp(found.map((v) => v.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'), 'g');
  return escaped.replace(pattern, (m) => `<mark>${m}</mark>`);
}

/** Stacked bars: one per operation and hour, coloured by result, with a legend. */
function chart(hourly: readonly HourlyCount[]): string {
  if (hourly.length === 0) return '<p class="none">No comparisons.</p>';
  const bars = new Map<string, Map<ShadowResult, number>>();
  for (const h of hourly) {
    const key = `${h.hour}\u0000${h.operation ?? '-'}`;
    const bar = bars.get(key) ?? new Map<ShadowResult, number>();
    bar.set(h.result, (bar.get(h.result) ?? 0) + h.count);
    bars.set(key, bar);
  }
  const keys = [...bars.keys()].sort();
  const max = Math.max(...[...bars.values()].map((b) => [...b.values()].reduce((a, c) => a + c, 0)));
  const width = 36;
  const height = 200;
  const rects: string[] = [];
  keys.forEach((key, i) => {
    const [hour, operation] = key.split('\u0000') as [string, string];
    let y = height;
    for (const result of SHADOW_RESULTS) {
      const n = bars.get(key)!.get(result) ?? 0;
      if (n === 0) continue;
      const h = (n / max) * height;
      y -= h;
      rects.push(
        `<rect x="${i * (width + 8)}" y="${y.toFixed(1)}" width="${width}" height="${h.toFixed(1)}" fill="${COLOURS[result]}"><title>${escapeHtml(`${hour}:00 ${operation}: ${n} ${result}`)}</title></rect>`,
      );
    }
    rects.push(
      `<text x="${i * (width + 8) + width / 2}" y="${height + 14}" text-anchor="middle" font-size="9">${escapeHtml(hour.slice(11, 13))}h</text>`,
      `<text transform="translate(${i * (width + 8) + width / 2},${height + 24}) rotate(45)" font-size="9">${escapeHtml(operation)}</text>`,
    );
  });
  // Room on the right for the last bar's slanted label.
  const total = keys.length * (width + 8) + 80;
  const legend = SHADOW_RESULTS.map(
    (r) => `<span><span class="swatch" style="background:${COLOURS[r]}"></span>${r}</span>`,
  ).join(' ');
  return `<svg xmlns="http://www.w3.org/2000/svg" role="img" aria-label="results per operation per hour" width="${total}" height="${height + 110}" viewBox="0 0 ${total} ${height + 110}">${rects.join('')}</svg><p class="legend">${legend}</p>`;
}

const STYLE = `body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:.2em .5em;text-align:left;vertical-align:top}
td.n{text-align:right}.swatch{display:inline-block;width:.8em;height:.8em;margin-right:.4em}
.sides{display:grid;grid-template-columns:1fr 1fr;gap:1em}pre{background:#f6f6f6;padding:.5em;overflow:auto;white-space:pre-wrap;word-break:break-all;max-height:30em}
mark{background:#ffeb3b}.none{color:#777}code.kind{font-size:.8em;color:#555}article.kind{border-top:1px solid #ddd;margin-top:1em}`;
