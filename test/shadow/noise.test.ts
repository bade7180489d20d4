/**
 * Noise told from regressions, on both stores: beside a legacy service that answers a read in two
 * versions in turn, a comparison judged different is asked once more, and the legacy's two
 * answers differing where ours differs makes it `noisy` (reported apart, its own kind); a legacy
 * that differs the same way twice stays `different`. The gate counts noise apart (--max-noisy).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ShadowReport } from '../../src/shadow/report.js';
import { eventually } from '../helpers/eventually.js';
import { goldenCases, startLegacyReplay } from '../helpers/legacy-replay.js';
import type { GoldenAnswer, LegacyReplay } from '../helpers/legacy-replay.js';
import { finish, sendCase, startShadowed, shadowCli } from '../helpers/shadow-run.js';
import { cleanupTargets, storeTargets } from '../helpers/store-targets.js';
import type { TestServer } from '../helpers/test-server.js';

after(cleanupTargets);

const TOKEN = 'soap11_GetTokenDevice_known';
const LIST = 'get_GetStudentSchool_several';

const replace = (a: GoldenAnswer, from: string, to: string): GoldenAnswer => {
  const text = a.body.toString('utf8');
  assert.ok(text.includes(from), `the capture holds ${from}`);
  return { ...a, body: Buffer.from(text.replace(from, to), 'utf8') };
};

function gate(args: string[], databaseUrl: string): Promise<{ code: number; out: string }> {
  return shadowCli(['report', '--check', ...args], { SIS_DATABASE_URL: databaseUrl });
}

for (const target of storeTargets) {
  describe(`noise told from regressions on ${target.name}`, { skip: target.skip ?? undefined }, () => {
    let legacy: LegacyReplay;
    let server: TestServer | undefined;
    let report: ShadowReport;
    let databaseUrl = '';
    before(async () => {
      let turn = 0;
      legacy = await startLegacyReplay({
        alter: new Map([
          // Two versions in turn, both unlike ours: the legacy's own value moving.
          [TOKEN, (a: GoldenAnswer) => replace(a, 'tok-AAA-111', ++turn % 2 === 1 ? 'tok-ODD' : 'tok-EVEN')],
          // The same difference every time: a regression.
          [LIST, (a: GoldenAnswer) => replace(a, 'Zoë Ångström', 'Zoe Angstrom')],
        ]),
      });
      const db = await target.fresh();
      databaseUrl = db.url;
      server = await startShadowed({ SIS_SHADOW: 'compare', SIS_LEGACY_URL: legacy.url }, db.url);
      // One at a time: each comparison (and its recheck) done before the next request, so the
      // legacy's versions alternate within each comparison.
      for (const name of [TOKEN, TOKEN, LIST]) {
        const asked = legacy.received.length;
        await sendCase(
          server!.url,
          goldenCases().find((c) => c.name === name)!,
        );
        await eventually(() => assert.equal(legacy.received.length, asked + 2));
      }
      report = await finish(server!, db.url);
      server = undefined;
    });
    after(async () => {
      // Closed here too, should the comparisons not come as expected.
      await server?.close();
      await legacy?.close();
    });

    it('asks the legacy once more for each read judged different', () => {
      assert.deepEqual(
        legacy.received.filter((n) => n !== 'page'),
        [TOKEN, TOKEN, TOKEN, TOKEN, LIST, LIST],
      );
    });

    it('a legacy answering two versions in turn is noisy, reported apart with its kind', () => {
      assert.equal(report.totals.noisy, 2, JSON.stringify(report.groups));
      assert.deepEqual(
        report.noisy.map((k) => [k.operation, k.binding, k.count, k.example?.paths.map((p) => p.path)]),
        [['GetTokenDevice', 'soap11', 2, ['/Envelope/Body/GetTokenDeviceResponse/GetTokenDeviceResult']]],
      );
    });

    it('a legacy differing the same way twice stays different', () => {
      assert.equal(report.totals.different, 1);
      assert.deepEqual(
        report.differences.map((d) => d.operation),
        ['GetStudentSchool'],
      );
    });

    it('the gate counts noise apart: --max-noisy', async () => {
      const failed = await gate([], databaseUrl);
      assert.equal(failed.code, 1);
      assert.match(failed.out, /^noisy: 2 comparisons, over 0/m);
      const noiseAllowed = await gate(['--max-noisy', '2', '--operation', 'GetTokenDevice'], databaseUrl);
      assert.deepEqual([noiseAllowed.code, noiseAllowed.out], [0, 'the cut-over gate is passed\n']);
    });
  });
}

describe('SIS_SHADOW_RECHECK=off', () => {
  it('never asks twice: a legacy answering two versions is different', async () => {
    let turn = 0;
    const legacy = await startLegacyReplay({
      alter: new Map([
        [TOKEN, (a: GoldenAnswer) => replace(a, 'tok-AAA-111', ++turn % 2 === 1 ? 'tok-ODD' : 'tok-EVEN')],
      ]),
    });
    try {
      const server = await startShadowed({
        SIS_SHADOW: 'compare',
        SIS_LEGACY_URL: legacy.url,
        SIS_SHADOW_RECHECK: 'off',
      });
      await sendCase(
        server.url,
        goldenCases().find((c) => c.name === TOKEN)!,
      );
      const report = await finish(server);
      assert.deepEqual(legacy.received, [TOKEN]);
      assert.deepEqual([report.totals.different, report.totals.noisy], [1, 0]);
    } finally {
      await legacy.close();
    }
  });
});
