/**
 * Accepted differences, on both stores, beside a legacy service replaying the golden exchanges
 * with deliberate differences: a kind accepted with `sis shadow accept --kind` while two
 * instances run on one database stops counting as `different` on both (within seconds, no
 * restart), its past counts reported `accepted` too, and the cut-over gate passes; a path accepted
 * with `--path` leaves the other paths of the same answer `different`, as a kind of their own;
 * `rules` lists the rules with their hits, `unaccept` removes one.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { RULES_REFRESH_MS } from '../../src/shadow/accepted.js';
import type { ShadowReport } from '../../src/shadow/report.js';
import type { ShadowRule } from '../../src/store/shadow-types.js';
import { goldenCases, startLegacyReplay } from '../helpers/legacy-replay.js';
import type { GoldenAnswer } from '../helpers/legacy-replay.js';
import { finish, sendCase, startShadowed, shadowCli } from '../helpers/shadow-run.js';
import { cleanupTargets, storeTargets } from '../helpers/store-targets.js';

after(cleanupTargets);

function sis(args: string[], databaseUrl: string): Promise<{ code: number; out: string; err: string }> {
  return shadowCli(args, { SIS_DATABASE_URL: databaseUrl });
}

async function report(databaseUrl: string): Promise<ShadowReport> {
  const r = await sis(['report', '--json'], databaseUrl);
  assert.equal(r.code, 0, r.err);
  return JSON.parse(r.out) as ShadowReport;
}

const edit =
  (...pairs: [string, string][]) =>
  (a: GoldenAnswer): GoldenAnswer => {
    let text = a.body.toString('utf8');
    for (const [from, to] of pairs) {
      assert.ok(text.includes(from), `the capture holds ${from}`);
      text = text.replace(from, to);
    }
    return { ...a, body: Buffer.from(text, 'utf8') };
  };

const TOKEN = 'soap11_GetTokenDevice_known';
const LIST = 'soap11_GetStudentSchool_several';
const ALTER = new Map([
  [TOKEN, edit(['tok-AAA-111', 'tok-AAA-999'])],
  // Two differences in one answer: a name, and a device left out.
  [LIST, edit(['Zoë Ångström', 'Zoe Angstrom'], ['<id_device>dev-002</id_device>', ''])],
]);
const caseNamed = (name: string) => goldenCases().find((c) => c.name === name)!;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

for (const target of storeTargets) {
  describe(`accepted differences on ${target.name}`, { skip: target.skip ?? undefined }, () => {
    it('a kind accepted while two instances run stops counting as different on both; the gate then passes', async () => {
      const legacy = await startLegacyReplay({ alter: ALTER });
      const db = await target.fresh();
      const env = { SIS_SHADOW: 'compare', SIS_LEGACY_URL: legacy.url };
      try {
        const a = await startShadowed(env, db.url);
        const b = await startShadowed(env, db.url);
        try {
          await sendCase(a.url, caseNamed(TOKEN));
          await sendCase(b.url, caseNamed(TOKEN));
          await a.app.close();
          const before = await report(db.url);
          assert.equal(before.differences.length, 1, JSON.stringify(before.differences));
          const kind = before.differences[0]!.kind;
          assert.match(kind, /^[0-9a-f]{16}$/);

          const gate = await sis(['report', '--check'], db.url);
          assert.equal(gate.code, 1);
          assert.match(gate.out, new RegExp(`^different: PushNotificationMobile GetTokenDevice soap11, kind ${kind}`));

          const accepted = await sis(['accept', '--kind', kind, '--note', 'the legacy token is stale'], db.url);
          assert.equal(accepted.code, 0, accepted.err);
          const id = Number(accepted.out.trim());
          assert.ok(Number.isInteger(id) && id > 0, accepted.out);

          // A new instance, and one that ran before the rule: both apply it within seconds.
          const c = await startShadowed(env, db.url);
          await pause(RULES_REFRESH_MS * 2);
          await sendCase(b.url, caseNamed(TOKEN));
          await sendCase(c.url, caseNamed(TOKEN));
          await b.app.close();
          await c.app.close();
          await c.close();

          const now = await report(db.url);
          assert.equal(now.totals.different, 0, JSON.stringify(now.groups));
          assert.equal(now.totals.accepted, 4, 'two accepted as they came, two counted before the rule');
          assert.deepEqual(now.differences, []);
          const rules = JSON.parse((await sis(['rules', '--json'], db.url)).out) as ShadowRule[];
          assert.deepEqual(
            rules.map((r) => ({ id: r.id, kind: r.kind, note: r.note, hits: r.hits })),
            [{ id, kind, note: 'the legacy token is stale', hits: 2 }],
          );
          const passed = await sis(['report', '--check'], db.url);
          assert.deepEqual([passed.code, passed.out], [0, 'the cut-over gate is passed\n']);

          assert.equal((await sis(['unaccept', String(id)], db.url)).code, 0);
          assert.equal((await sis(['unaccept', String(id)], db.url)).code, 1);
          assert.equal((await sis(['report', '--check'], db.url)).code, 1, 'the kind is different again');
        } finally {
          await a.close();
          await b.close();
        }
      } finally {
        await legacy.close();
      }
    });

    it('a path accepted leaves the other paths of the same answer different, as a kind of their own', async () => {
      const legacy = await startLegacyReplay({ alter: ALTER });
      const db = await target.fresh();
      const env = { SIS_SHADOW: 'compare', SIS_LEGACY_URL: legacy.url };
      try {
        const pattern = '/Envelope/Body/*/GetStudentSchoolResult/StudentInfo/fullName';
        const server = await startShadowed(env, db.url);
        const accepted = await sis(
          ['accept', '--path', pattern, '--operation', 'GetStudentSchool', '--note', 'names are trimmed'],
          db.url,
        );
        assert.equal(accepted.code, 0, accepted.err);
        await pause(RULES_REFRESH_MS * 2);
        await sendCase(server.url, caseNamed(LIST));
        await sendCase(server.url, caseNamed(TOKEN));
        const shown = await finish(server, db.url);
        assert.equal(shown.totals.different, 2);
        const list = shown.differences.find((d) => d.operation === 'GetStudentSchool')!;
        assert.deepEqual(
          list.example?.paths.map((p) => p.path.replace(/\[[^\]]*\]/g, '')),
          ['/Envelope/Body/GetStudentSchoolResponse/GetStudentSchoolResult/StudentInfo/id_device'],
          'the accepted name is not among the paths',
        );
        const rules = JSON.parse((await sis(['rules', '--json'], db.url)).out) as ShadowRule[];
        assert.deepEqual(
          rules.map((r) => [r.path, r.operation, r.hits]),
          [[pattern, 'GetStudentSchool', 1]],
        );
        const text = (await sis(['rules'], db.url)).out;
        assert.match(text, /names are trimmed/);
        assert.equal((await sis(['accept', '--path', '/a/b[2]', '--note', 'x'], db.url)).code, 2);
        assert.equal((await sis(['accept', '--kind', 'nope', '--note', 'x'], db.url)).code, 2);
        assert.equal((await sis(['accept', '--kind', 'a'.repeat(16)], db.url)).code, 2, '--note is required');
      } finally {
        await legacy.close();
      }
    });
  });
}
