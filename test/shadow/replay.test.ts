/**
 * `sis shadow replay`, on both stores, beside a legacy service that lists one student more than
 * ours: the kept example replayed is still `different` until the missing student is imported,
 * then the kind is gone; a kind of a write (AuthCode, in legacy mode) is never replayed.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { ReplayedKind } from '../../src/shadow/replay.js';
import { openStore } from '../../src/store/open/open-store.js';
import { goldenCases, startLegacyReplay } from '../helpers/legacy-replay.js';
import type { GoldenAnswer } from '../helpers/legacy-replay.js';
import { finish, sendCase, startShadowed, shadowCli } from '../helpers/shadow-run.js';
import { cleanupTargets, storeTargets } from '../helpers/store-targets.js';

after(cleanupTargets);

const LIST = 'get_GetStudentSchool_several';
const AUTH_CODE = 'get_AuthCode';
const EXTRA =
  '  <StudentInfo>\n    <id_student>17</id_student>\n    <fullName>New Student</fullName>\n' +
  '    <id_device>dev-017</id_device>\n    <ShowActive>1</ShowActive>\n  </StudentInfo>\n';
const STUDENT_17 = {
  id_student: '17',
  fullName: 'New Student',
  id_device: 'dev-017',
  ShowActive: '1',
  school_base_url: 'http://school-a.example',
};

const ALTER = new Map([
  // The legacy lists a student ours does not have (yet), last.
  [
    LIST,
    (a: GoldenAnswer): GoldenAnswer => ({
      ...a,
      body: Buffer.from(a.body.toString('utf8').replace('</ArrayOfStudentInfo>', `${EXTRA}</ArrayOfStudentInfo>`)),
    }),
  ],
  // The legacy refuses this AuthCode; ours accepts it: a difference of a write.
  [AUTH_CODE, (a: GoldenAnswer): GoldenAnswer => ({ ...a, status: 500 })],
]);

async function replay(env: Record<string, string>): Promise<ReplayedKind[]> {
  const { code, out, err } = await shadowCli(['replay', '--json'], env);
  assert.equal(code, 0, err);
  return JSON.parse(out) as ReplayedKind[];
}

for (const target of storeTargets) {
  describe(`sis shadow replay on ${target.name}`, { skip: target.skip ?? undefined }, () => {
    it('finds a kind gone once the missing student is imported; never replays a write', async () => {
      const legacy = await startLegacyReplay({ alter: ALTER });
      const db = await target.fresh();
      try {
        const server = await startShadowed({ SIS_SHADOW: 'legacy', SIS_LEGACY_URL: legacy.url }, db.url);
        for (const name of [LIST, AUTH_CODE])
          await sendCase(
            server.url,
            goldenCases().find((c) => c.name === name)!,
          );
        const report = await finish(server, db.url);
        assert.equal(report.differences.length, 2, JSON.stringify(report.differences));
        const listKind = report.differences.find((d) => d.operation === 'GetStudentSchool')!.kind;
        const env = { SIS_DATABASE_URL: db.url, SIS_LEGACY_URL: legacy.url };

        legacy.received.length = 0;
        const before = await replay(env);
        assert.deepEqual(before.map((k) => [k.operation, k.now]).sort(), [
          ['AuthCode', 'not-replayed'],
          ['GetStudentSchool', 'different'],
        ]);
        assert.match(before.find((k) => k.kind === listKind)!.note!, /StudentInfo\[id_student="17"\]/);
        assert.ok(!legacy.received.includes(AUTH_CODE), 'the write is not sent again');

        const store = await openStore(db.url, { poolSize: 2 });
        try {
          await store.importDataset({ students: [STUDENT_17] });
        } finally {
          await store.close();
        }
        const after = await replay(env);
        const list = after.find((k) => k.kind === listKind)!;
        assert.equal(list.now, 'gone', JSON.stringify(list));
        assert.ok(['identical', 'equivalent'].includes(list.result!), list.result ?? '');
      } finally {
        await legacy.close();
      }
    });
  });
}
