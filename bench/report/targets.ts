/** The issues' targets, each computed from figures of the same run. */
import type { Scenario, TargetName } from '../scenarios/scenario.js';
import { fixed, int, mib, pct, ratio } from './report.js';
import type { GrowthRecord, Results, Summary, Target } from './report.js';

export function evaluateTargets(
  scenarios: readonly Scenario[],
  results: Results,
  growth: readonly GrowthRecord[],
): Target[] {
  const out: Target[] = [];
  const get = (id: string, t: TargetName): Summary | undefined => results.get(id)?.get(t);
  const share = (id: string, min: number, label: string): void => {
    const ours = get(id, 'ours');
    const ceiling = get(id, 'ceiling');
    if (ours === undefined || ceiling === undefined) return;
    const r = ours.rps / ceiling.rps;
    out.push({ name: `${label}: req/s vs ceiling`, measured: pct(r), goal: `≥ ${pct(min)}`, met: r >= min });
  };
  share('token-soap11', 0.7, 'GetTokenDevice SOAP 1.1');
  share('token-soap12', 0.7, 'GetTokenDevice SOAP 1.2');
  share('token-get', 0.8, 'GetTokenDevice HTTP GET');
  share('token-post', 0.8, 'GetTokenDevice HTTP POST');
  // Issue 22: ours against the work its answers need, where the necessary-work server ran.
  for (const id of ['token-soap11', 'token-soap12', 'token-get', 'token-post', 'school-soap11', 'school-get']) {
    const ours = get(id, 'ours');
    const necessary = get(id, 'necessary');
    const s = scenarios.find((x) => x.id === id);
    if (ours === undefined || necessary === undefined || s === undefined) continue;
    const r = ours.rps / necessary.rps;
    out.push({ name: `${s.title} ${s.binding}: req/s vs necessary`, measured: pct(r), goal: '≥ 85%', met: r >= 0.85 });
    const p = ours.p99 / necessary.p99;
    out.push({
      name: `${s.title} ${s.binding}: p99 vs necessary`,
      measured: `${ratio(p)} (${fixed(ours.p99, 2)} / ${fixed(necessary.p99, 2)} ms)`,
      goal: '≤ 1.5×',
      met: p <= 1.5,
    });
  }
  // What the access log costs: ours as shipped against ours with LOG_LEVEL=silent, same run.
  for (const id of ['token-soap11', 'token-soap12', 'token-get', 'token-post', 'school-soap11', 'school-get']) {
    const ours = get(id, 'ours');
    const silent = get(id, 'ours-silent');
    const title = scenarios.find((x) => x.id === id);
    if (ours === undefined || silent === undefined || title === undefined) continue;
    const r = ours.rps / silent.rps;
    out.push({
      name: `${title.title} ${title.binding}: req/s with the access log vs silent`,
      measured: pct(r),
      goal: '≥ 90%',
      met: r >= 0.9,
    });
  }
  const bigOurs = get('school1000-soap11', 'ours');
  const bigPeer = get('school1000-soap11', 'node-soap');
  if (bigOurs !== undefined && bigPeer !== undefined) {
    const r = bigOurs.rps / bigPeer.rps;
    out.push({
      name: 'GetStudentSchool 1,000 students: req/s vs node-soap',
      measured: ratio(r),
      goal: '≥ 20×',
      met: r >= 20,
    });
  }
  for (const s of scenarios) {
    const ours = get(s.id, 'ours');
    const ceiling = get(s.id, 'ceiling');
    if (ours === undefined || ceiling === undefined) continue;
    const r = ours.p99 / ceiling.p99;
    out.push({
      name: `${s.title} ${s.binding}: p99 vs ceiling`,
      measured: `${ratio(r)} (${fixed(ours.p99, 2)} / ${fixed(ceiling.p99, 2)} ms)`,
      goal: '≤ 2×',
      met: r <= 2,
    });
  }
  for (const s of scenarios) {
    const ours = get(s.id, 'ours');
    const peer = get(s.id, 'node-soap');
    if (ours === undefined || peer === undefined) continue;
    out.push({
      name: `${s.title} ${s.binding}: peak RSS vs node-soap`,
      measured: `${mib(ours.peakRss)} / ${mib(peer.peakRss)} MiB`,
      goal: '≤ node-soap',
      met: ours.peakRss <= peer.peakRss,
    });
  }
  const sizes = [...new Set(growth.map((g) => g.students))];
  for (const n of sizes) {
    const ours = growth.find((g) => g.students === n && g.target === 'ours');
    const peer = growth.find((g) => g.students === n && g.target === 'node-soap');
    if (ours === undefined || peer === undefined || ours.error !== undefined || peer.error !== undefined) continue;
    out.push({
      name: `Growth ${int(n)} students: peak RSS vs node-soap`,
      measured: `${mib(ours.peakRss)} / ${mib(peer.peakRss)} MiB`,
      goal: '≤ node-soap',
      met: ours.peakRss <= peer.peakRss,
    });
  }
  for (const s of scenarios) {
    for (const [t, r] of results.get(s.id) ?? []) {
      if (r.bad > 0)
        out.push({
          name: `${s.id} at ${t}: failed answers under load`,
          measured: String(r.bad),
          goal: '0',
          met: false,
        });
    }
  }
  return out;
}
