/**
 * Two instances on one PostgreSQL add up in one report, read with `sis shadow report --json`
 * (the documented shape, exactly); `sis shadow reset` clears it.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { goldenCases, startLegacyReplay } from '../helpers/legacy-replay.js';
import { finish, sendCase, startShadowed, shadowCli } from '../helpers/shadow-run.js';
import { cleanupTargets, postgresTarget } from '../helpers/store-targets.js';

after(cleanupTargets);

const run = shadowCli;

describe('two instances on one PostgreSQL', { skip: postgresTarget.skip ?? undefined }, () => {
  it('add up in one report, shaped as documented; reset clears it', async () => {
    const legacy = await startLegacyReplay();
    const db = await postgresTarget.fresh();
    const token = goldenCases().find((c) => c.name === 'soap11_GetTokenDevice_known')!;
    const list = goldenCases().find((c) => c.name === 'get_GetStudentSchool_several')!;
    try {
      const env = { SIS_SHADOW: 'compare', SIS_LEGACY_URL: legacy.url };
      const a = await startShadowed(env, db.url);
      const b = await startShadowed(env, db.url);
      for (let i = 0; i < 3; i++) await sendCase(a.url, token);
      for (let i = 0; i < 2; i++) await sendCase(b.url, token);
      await sendCase(b.url, list);
      await finish(a, db.url);
      await finish(b, db.url);

      const cli = await run(['report', '--json'], { SIS_DATABASE_URL: db.url });
      assert.equal(cli.code, 0, cli.err);
      const report = JSON.parse(cli.out) as Record<string, unknown>;
      assert.deepEqual(Object.keys(report), ['since', 'totals', 'overCap', 'groups', 'differences', 'noisy']);
      assert.match(String(report['since']), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      assert.deepEqual(report['totals'], {
        identical: 6,
        equivalent: 0,
        accepted: 0,
        noisy: 0,
        different: 0,
        'legacy-failed': 0,
        skipped: 0,
      });
      assert.deepEqual(report['groups'], [
        {
          service: 'NotificationNotes',
          operation: 'GetStudentSchool',
          binding: 'httpget',
          mode: 'compare',
          result: 'identical',
          count: 1,
        },
        {
          service: 'PushNotificationMobile',
          operation: 'GetTokenDevice',
          binding: 'soap11',
          mode: 'compare',
          result: 'identical',
          count: 5,
        },
      ]);
      assert.deepEqual(report['differences'], []);
      assert.deepEqual(report['noisy'], []);

      const text = await run(['report', '--since', '1h'], { SIS_DATABASE_URL: db.url });
      assert.match(text.out, /identical\t6/);
      const reset = await run(['reset'], { SIS_DATABASE_URL: db.url });
      assert.equal(reset.code, 0, reset.err);
      const after = JSON.parse((await run(['report', '--json'], { SIS_DATABASE_URL: db.url })).out) as {
        groups: unknown[];
      };
      assert.deepEqual(after.groups, []);
      assert.equal((await run(['report', '--since', 'soon'], { SIS_DATABASE_URL: db.url })).code, 2);
    } finally {
      await legacy.close();
    }
  });
});
