/**
 * Lists paired by key (StudentInfo's `id_student`, declared with the type in the contract), on
 * both stores, beside a legacy service replaying the golden exchanges with deliberate
 * differences: one extra student at the head of the legacy's list is exactly one path per list
 * request, naming its key, in GET/POST and in SOAP; the same students in reverse order are one
 * `order` kind.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ShadowReport } from '../../src/shadow/report.js';
import { goldenCases, startLegacyReplay } from '../helpers/legacy-replay.js';
import type { GoldenAnswer, LegacyReplay } from '../helpers/legacy-replay.js';
import { finish, sendCase, startShadowed } from '../helpers/shadow-run.js';
import { cleanupTargets, storeTargets } from '../helpers/store-targets.js';

after(cleanupTargets);

const EXTRA_INDENTED =
  '  <StudentInfo>\n    <id_student>17</id_student>\n    <fullName>New Student</fullName>\n' +
  '    <id_device>dev-017</id_device>\n    <ShowActive>1</ShowActive>\n  </StudentInfo>\n';
const EXTRA_COMPACT =
  '<StudentInfo><id_student>17</id_student><fullName>New Student</fullName>' +
  '<id_device>dev-017</id_device><ShowActive>1</ShowActive></StudentInfo>';

const rewrite =
  (change: (text: string) => string) =>
  (a: GoldenAnswer): GoldenAnswer => {
    const text = a.body.toString('utf8');
    const changed = change(text);
    assert.notEqual(changed, text, 'the capture is changed');
    return { ...a, body: Buffer.from(changed, 'utf8') };
  };

/** The two students of a GET/POST answer, swapped. */
const reversed = (text: string): string => {
  const items = text.match(/ {2}<StudentInfo>[\s\S]*?<\/StudentInfo>\n/g)!;
  assert.equal(items.length, 2);
  return text.replace(items[0]! + items[1]!, items[1]! + items[0]!);
};

const ALTER = new Map([
  ['get_GetStudentSchool_several', rewrite((t) => t.replace('  <StudentInfo>', `${EXTRA_INDENTED}  <StudentInfo>`))],
  ['soap11_GetStudentSchool_several', rewrite((t) => t.replace('<StudentInfo>', `${EXTRA_COMPACT}<StudentInfo>`))],
  ['post_GetStudentSchool_several', rewrite(reversed)],
]);

const SOAP_LIST = '/Envelope/Body/GetStudentSchoolResponse/GetStudentSchoolResult';

for (const target of storeTargets) {
  describe(`lists paired by key on ${target.name}`, { skip: target.skip ?? undefined }, () => {
    let legacy: LegacyReplay;
    let report: ShadowReport;
    before(async () => {
      legacy = await startLegacyReplay({ alter: ALTER });
      const db = await target.fresh();
      const server = await startShadowed({ SIS_SHADOW: 'compare', SIS_LEGACY_URL: legacy.url }, db.url);
      for (const name of ALTER.keys()) {
        // Twice each: the same difference is the same kind.
        for (let i = 0; i < 2; i++)
          await sendCase(
            server.url,
            goldenCases().find((c) => c.name === name)!,
          );
      }
      report = await finish(server, db.url);
    });
    after(() => legacy?.close());

    const pathsOf = (binding: string) => {
      const found = report.differences.filter((d) => d.binding === binding);
      assert.equal(found.length, 1, `one kind for ${binding}: ${JSON.stringify(report.differences)}`);
      assert.equal(found[0]!.count, 2, 'both requests are that kind');
      return found[0]!.example!.paths;
    };

    it('one extra student at the head of the legacy list is one path naming its key (GET)', () => {
      const paths = pathsOf('httpget');
      assert.deepEqual(
        paths.map((p) => [p.path, p.ours]),
        [['/ArrayOfStudentInfo/StudentInfo[id_student="17"]', null]],
      );
      assert.match(paths[0]!.legacy!, /<id_student>17<\/id_student><fullName>New Student<\/fullName>/);
    });

    it('the same step under GetStudentSchoolResult in SOAP', () => {
      assert.deepEqual(
        pathsOf('soap11').map((p) => [p.path, p.ours]),
        [[`${SOAP_LIST}/StudentInfo[id_student="17"]`, null]],
      );
    });

    it('the same students in reverse order are one order kind, the list path', () => {
      assert.deepEqual(pathsOf('httppost'), [{ path: 'order:/ArrayOfStudentInfo', legacy: '2, 1', ours: '1, 2' }]);
    });

    it('counts nothing else', () => {
      assert.equal(report.totals.different, 6, JSON.stringify(report.groups));
    });
  });
}

describe('SIS_SHADOW_LIST_ORDER=ignore', () => {
  it('the same students in another order are no difference', async () => {
    const legacy = await startLegacyReplay({ alter: ALTER });
    try {
      const server = await startShadowed({
        SIS_SHADOW: 'compare',
        SIS_LEGACY_URL: legacy.url,
        SIS_SHADOW_LIST_ORDER: 'ignore',
      });
      await sendCase(
        server.url,
        goldenCases().find((c) => c.name === 'post_GetStudentSchool_several')!,
      );
      const report = await finish(server);
      assert.deepEqual(
        report.groups.map((g) => [g.binding, g.result]),
        [['httppost', 'equivalent']],
      );
    } finally {
      await legacy.close();
    }
  });
});
