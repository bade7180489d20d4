/**
 * Beside a legacy service that replays the golden exchanges byte for byte, with four answers
 * changed on purpose (a token, a student's name, a missing element, a status) and one changed in
 * form only (a namespace prefix): over every binding and the metadata pages, on both stores, the
 * shadow reports exactly those four differences, with their paths and values, and nothing else.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ShadowReport } from '../../src/shadow/report.js';
import { LEGACY_BASE, goldenCases, startLegacyReplay } from '../helpers/legacy-replay.js';
import type { GoldenAnswer, LegacyReplay } from '../helpers/legacy-replay.js';
import { rawRequest } from '../helpers/raw-http.js';
import { finish, sendCase, startShadowed } from '../helpers/shadow-run.js';
import { cleanupTargets, storeTargets } from '../helpers/store-targets.js';
import { goldenDataset, startTestServer } from '../helpers/test-server.js';
import type { TestServer } from '../helpers/test-server.js';

const edit =
  (from: string, to: string) =>
  (a: GoldenAnswer): GoldenAnswer => {
    const text = a.body.toString('utf8');
    assert.ok(text.includes(from), `the capture holds ${from}`);
    return { ...a, body: Buffer.from(text.replace(from, to), 'utf8') };
  };

const ALTER = new Map<string, (a: GoldenAnswer) => GoldenAnswer>([
  ['soap11_GetTokenDevice_known', edit('tok-AAA-111', 'tok-AAA-999')],
  ['soap12_GetStudentSchool_several', edit('Zoë Ångström', 'Zoe Angstrom')],
  ['get_GetStudentSchool_several', edit('    <id_device>dev-002</id_device>\n', '')],
  ['post_GetTokenDevice_known', (a) => ({ ...a, status: 500 })],
  // Form only: another prefix for the same namespace is equivalent, not different.
  [
    'get_GetTokenDevice_known',
    edit(
      '<string xmlns="http://tempuri.org/">tok-AAA-111</string>',
      '<t:string xmlns:t="http://tempuri.org/">tok-AAA-111</t:string>',
    ),
  ],
]);

const EXPECTED = [
  {
    binding: 'soap11',
    operation: 'GetTokenDevice',
    paths: [
      {
        path: '/Envelope/Body/GetTokenDeviceResponse/GetTokenDeviceResult',
        legacy: 'tok-AAA-999',
        ours: 'tok-AAA-111',
      },
    ],
  },
  {
    binding: 'soap12',
    operation: 'GetStudentSchool',
    paths: [
      {
        path: '/Envelope/Body/GetStudentSchoolResponse/GetStudentSchoolResult/StudentInfo[id_student="2"]/fullName',
        legacy: 'Zoe Angstrom',
        ours: 'Zoë Ångström',
      },
    ],
  },
  {
    binding: 'httpget',
    operation: 'GetStudentSchool',
    paths: [{ path: '/ArrayOfStudentInfo/StudentInfo[id_student="2"]/id_device', legacy: null, ours: 'dev-002' }],
  },
  { binding: 'httppost', operation: 'GetTokenDevice', paths: [{ path: 'status', legacy: '500', ours: '200' }] },
];

const PAGES = ['?WSDL', '?wsdl', '?disco', '', '?op=GetStudentSchool'];
const FILES = ['NotificationNotes', 'PushNotificationMobile', 'GetStudnetsMarks', 'AuthCodeSending'];

after(cleanupTargets);

for (const target of storeTargets) {
  describe(
    `compare mode beside a replaying legacy service, on ${target.name}`,
    { skip: target.skip ?? undefined },
    () => {
      let pages: TestServer;
      let legacy: LegacyReplay;
      let report: ShadowReport;
      const seen = new Map<string, { status: number; body: Buffer }>();
      const cases = goldenCases();

      before(async () => {
        pages = await startTestServer({ dataset: goldenDataset(), env: { SIS_BASE_PATH: LEGACY_BASE } });
        legacy = await startLegacyReplay({ alter: ALTER, pages: pages.url });
        const db = await target.fresh();
        const url = target.name === 'SQLite' ? undefined : db.url;
        const server = await startShadowed({ SIS_SHADOW: 'compare', SIS_LEGACY_URL: legacy.url }, url);
        for (const c of cases) {
          const res = await sendCase(server.url, c);
          seen.set(c.name, { status: res.status, body: res.body });
        }
        for (const file of FILES)
          for (const page of PAGES) await rawRequest(server.url, { method: 'GET', path: `/${file}.asmx${page}` });
        // Waits for the comparisons in progress, then stores the counts.
        report = await finish(server, url);
      });
      after(async () => {
        await legacy?.close();
        await pages?.close();
      });

      it('answers the client itself: the golden answers, whatever the legacy service says', () => {
        for (const c of cases) {
          if (c.answer.contentType === 'text/html') continue;
          const got = seen.get(c.name)!;
          assert.equal(got.status, c.answer.status, c.name);
          assert.ok(got.body.equals(c.answer.body), `${c.name}: body bytes`);
        }
      });

      it('reports the four differences exactly: binding, operation, paths and both values', () => {
        const found = report.differences.map((d) => ({
          binding: d.binding,
          operation: d.operation,
          paths: d.example?.paths,
        }));
        const order = (x: { binding: string }, y: { binding: string }): number => x.binding.localeCompare(y.binding);
        assert.deepEqual([...found].sort(order), [...EXPECTED].sort(order));
        for (const d of report.differences) assert.equal(d.count, 1);
        assert.equal(report.totals.different, 4);
      });

      it('reports nothing else: every other answer identical or equivalent, none failed', () => {
        assert.equal(report.totals['legacy-failed'], 0, JSON.stringify(report.groups));
        const total = Object.values(report.totals).reduce((a, b) => a + b, 0);
        assert.equal(total, cases.length + FILES.length * PAGES.length, 'one result per request');
        assert.ok(report.totals.equivalent >= 1 + FILES.length * 3, 'a prefix and the pages naming their own address');
      });

      it('keeps every metadata page identical or equivalent, its address set aside', () => {
        const pagesCounted = report.groups.filter((g) => g.binding === 'metadata');
        assert.ok(pagesCounted.length > 0);
        for (const g of pagesCounted) assert.ok(['identical', 'equivalent'].includes(g.result), JSON.stringify(g));
      });

      it('marks every copy it sends with X-Shadow-Copy: 1', () => {
        assert.ok(legacy.copies.length > 0);
        assert.ok(
          legacy.copies.every((c) => c),
          'every request the legacy got is a copy',
        );
      });

      it('never sends AuthCode, or a request whose operation is not known, to the legacy service (counted skipped)', () => {
        assert.ok(!legacy.received.some((name) => /AuthCode/.test(name)), legacy.received.join(' '));
        const skipped = report.groups.filter((g) => g.result === 'skipped');
        assert.ok(skipped.some((g) => g.service === 'AuthCodeSending'));
        // A name the file lacks may be one the legacy runs: treated as a write, never sent twice.
        for (const g of skipped) assert.ok(g.service === 'AuthCodeSending' || g.operation === null, JSON.stringify(g));
      });
    },
  );
}
