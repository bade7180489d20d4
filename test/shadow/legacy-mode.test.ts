/**
 * Legacy mode: the legacy service answers the client (status, content type, cache headers and
 * body passed through) and ours is computed beside it and compared. AuthCode is taken by the
 * legacy service only: ours validates it, stores no code and queues no SMS, and the two outcomes
 * are compared, over every binding.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ShadowReport } from '../../src/shadow/report.js';
import { LEGACY_BASE, goldenCases, startLegacyReplay } from '../helpers/legacy-replay.js';
import type { GoldenAnswer, GoldenCase, LegacyReplay } from '../helpers/legacy-replay.js';
import type { RawResponse } from '../helpers/raw-http.js';
import { finish, sendCase, startShadowed } from '../helpers/shadow-run.js';
import { startSmsGateway } from '../helpers/sms-gateway.js';
import type { SmsGateway } from '../helpers/sms-gateway.js';
import { cleanupTargets, storeTargets } from '../helpers/store-targets.js';
import type { FreshDatabase } from '../helpers/store-targets.js';
import { goldenDataset, startTestServer } from '../helpers/test-server.js';
import type { TestServer } from '../helpers/test-server.js';

const SECRET = 'shadow-test-secret-of-32-bytes-or-more';
const AUTH_CODE_CASES = ['soap11_AuthCode', 'soap12_AuthCode', 'get_AuthCode', 'post_AuthCode'];
const CHANGED_TOKEN = (a: GoldenAnswer): GoldenAnswer => ({
  ...a,
  body: Buffer.from(a.body.toString('utf8').replace('tok-AAA-111', 'tok-AAA-999')),
});
/** The legacy refuses this one (a fault): our dry run accepts it, so the outcomes differ. */
const REFUSED = (a: GoldenAnswer): GoldenAnswer => ({ ...a, status: 500 });

after(cleanupTargets);

for (const target of storeTargets) {
  describe(
    `legacy mode beside a replaying legacy service, on ${target.name}`,
    { skip: target.skip ?? undefined },
    () => {
      let pages: TestServer;
      let legacy: LegacyReplay;
      let gateway: SmsGateway;
      let db: FreshDatabase;
      let report: ShadowReport;
      const seen = new Map<string, RawResponse>();
      const cases = goldenCases();
      const byName = new Map<string, GoldenCase>(cases.map((c) => [c.name, c]));

      before(async () => {
        pages = await startTestServer({ dataset: goldenDataset(), env: { SIS_BASE_PATH: LEGACY_BASE } });
        legacy = await startLegacyReplay({
          alter: new Map([
            ['soap11_GetTokenDevice_known', CHANGED_TOKEN],
            ['get_AuthCode', REFUSED],
          ]),
          pages: pages.url,
        });
        gateway = await startSmsGateway(SECRET);
        db = await target.fresh();
        const url = db.url;
        const server = await startShadowed(
          {
            SIS_SHADOW: 'legacy',
            SIS_LEGACY_URL: legacy.url,
            SIS_SMS_WEBHOOK_URL: gateway.url,
            SIS_SMS_WEBHOOK_SECRET: SECRET,
            SIS_OUTBOX_POLL_MS: '10',
          },
          url,
        );
        for (const c of cases) seen.set(c.name, await sendCase(server.url, c));
        report = await finish(server, url);
      });
      after(async () => {
        await legacy?.close();
        await pages?.close();
        await gateway?.close();
      });

      it('passes the legacy answer through: status, content type, cache header and body bytes', () => {
        for (const name of ['soap11_GetTokenDevice_known', 'get_GetStudentSchool_several', 'soap12_GetStudentsMarks']) {
          const want =
            name === 'soap11_GetTokenDevice_known' ? CHANGED_TOKEN(byName.get(name)!.answer) : byName.get(name)!.answer;
          const got = seen.get(name)!;
          assert.equal(got.status, want.status, name);
          assert.equal(got.headers.get('content-type') ?? null, want.contentType, name);
          assert.equal(got.headers.get('cache-control') ?? null, want.cacheControl, name);
          assert.ok(got.body.equals(want.body), `${name}: the legacy's bytes`);
        }
        assert.equal(seen.get('get_AuthCode')!.status, 500, 'the legacy refusal reaches the client');
      });

      it('sends every request to the legacy service, AuthCode included (it takes the writes)', () => {
        for (const name of AUTH_CODE_CASES) assert.ok(legacy.received.includes(name), name);
      });

      it("sends clients' requests as they are; only a read's recheck is marked X-Shadow-Copy: 1, never a write", () => {
        assert.deepEqual(
          legacy.received.filter((_, i) => legacy.copies[i]),
          ['soap11_GetTokenDevice_known'],
        );
      });

      it('validates AuthCode only: no code stored, no SMS queued or sent by us', async () => {
        assert.equal(gateway.received.length, 0);
        const sql = db.sql.bind(db);
        assert.deepEqual(await sql('select count(*) as n from auth_codes').then((r) => Number(r[0]!['n'])), 0);
        assert.deepEqual(await sql('select count(*) as n from outbox').then((r) => Number(r[0]!['n'])), 0);
      });

      it('compares the AuthCode outcomes: accepted by both where both accept, the refusal reported', () => {
        const authCode = report.groups.filter((g) => g.service === 'AuthCodeSending' && g.binding !== 'metadata');
        const identical = authCode.filter((g) => g.result === 'identical').reduce((n, g) => n + g.count, 0);
        assert.ok(identical >= 3, JSON.stringify(authCode));
        const refused = report.differences.find((d) => d.operation === 'AuthCode');
        assert.equal(refused?.binding, 'httpget');
        assert.deepEqual(refused?.example?.paths, [{ path: 'status', legacy: '500', ours: '200' }]);
        // Kept with the phone and code masked, as `sis outbox` shows them.
        assert.doesNotMatch(JSON.stringify(refused?.example), /15551234567|123456/);
      });

      it('reports the changed token with its path and both values', () => {
        const token = report.differences.find((d) => d.operation === 'GetTokenDevice');
        assert.deepEqual(token?.example?.paths, [
          {
            path: '/Envelope/Body/GetTokenDeviceResponse/GetTokenDeviceResult',
            legacy: 'tok-AAA-999',
            ours: 'tok-AAA-111',
          },
        ]);
        assert.equal(report.totals.different, 2, JSON.stringify(report.differences.map((d) => d.example?.paths)));
        assert.equal(report.totals['legacy-failed'], 0);
      });
    },
  );
}
