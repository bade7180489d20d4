/**
 * A legacy service that hangs, refuses connections, floods (50 MB) or does not speak HTTP costs
 * the client nothing in compare mode (our answer, counted legacy-failed), and in legacy mode
 * gives the client ours (fail-over, counted and logged once) or, with SIS_SHADOW_FALLBACK=off,
 * a 502 with an empty body. A write the legacy may have received is never done by us as well.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, describe, it } from 'node:test';
import { openStore } from '../../src/store/open/open-store.js';
import { startBadLegacy } from '../helpers/bad-legacy.js';
import type { Badness } from '../helpers/bad-legacy.js';
import { eventually } from '../helpers/eventually.js';
import { goldenCases } from '../helpers/legacy-replay.js';
import { databaseUrlOf, finish, sendCase, startShadowed } from '../helpers/shadow-run.js';
import { closedPort } from '../helpers/sms-gateway.js';
import type { TestServer } from '../helpers/test-server.js';

const cases = goldenCases();
const TOKEN = cases.find((c) => c.name === 'soap11_GetTokenDevice_known')!;
const LIST = cases.find((c) => c.name === 'get_GetStudentSchool_several')!;
const AUTH_CODE = cases.find((c) => c.name === 'soap11_AuthCode')!;

type Legacy = { url: string; close(): Promise<void> };

async function legacyThat(badness: Badness | 'refuse'): Promise<Legacy> {
  if (badness !== 'refuse') return startBadLegacy(badness);
  return { url: `http://127.0.0.1:${await closedPort()}/Legacy/`, close: async () => undefined };
}

/** The SMS messages queued in a stopped service's database; its files are removed after. */
async function queuedSms(server: TestServer): Promise<number> {
  const store = await openStore(databaseUrlOf(server));
  try {
    return (await store.listOutbox({})).length;
  } finally {
    await store.close();
    await server.close();
  }
}

const BADNESS: readonly (Badness | 'refuse')[] = ['hang', 'refuse', 'huge', 'garbage'];

describe('a legacy service that fails', () => {
  for (const badness of BADNESS) {
    describe(`one that does this: ${badness}`, () => {
      let legacy: Legacy;
      after(() => legacy?.close());

      it('compare mode: the client gets our answer; the comparison is legacy-failed', async () => {
        legacy = await legacyThat(badness);
        const server = await startShadowed({
          SIS_SHADOW: 'compare',
          SIS_LEGACY_URL: legacy.url,
          SIS_SHADOW_TIMEOUT_MS: '300',
          SIS_SHADOW_MAX_ANSWER_BYTES: '1048576',
        });
        for (const c of [TOKEN, LIST]) {
          const res = await sendCase(server.url, c);
          assert.equal(res.status, 200);
          assert.ok(res.body.equals(c.answer.body), `${c.name}: our own answer`);
        }
        const metrics = await server.app.registry.metrics();
        const report = await finish(server);
        assert.equal(report.totals['legacy-failed'], 2, JSON.stringify(report.groups));
        assert.equal(report.totals.identical + report.totals.different, 0);
        assert.match(metrics, /sis_shadow_legacy_seconds_count \d/);
      });

      it('legacy mode: the client gets our answer instead (fail-over), counted', async () => {
        const lines: string[] = [];
        const logs = new Writable({
          write(chunk: Buffer, _enc, done) {
            lines.push(chunk.toString('utf8'));
            done();
          },
        });
        const server = await startShadowed(
          {
            SIS_SHADOW: 'legacy',
            SIS_LEGACY_URL: legacy.url,
            SIS_SHADOW_TIMEOUT_MS: '300',
            SIS_SHADOW_MAX_ANSWER_BYTES: '1048576',
            LOG_LEVEL: 'info',
          },
          undefined,
          logs,
        );
        for (const c of [TOKEN, LIST, TOKEN]) {
          const res = await sendCase(server.url, c);
          assert.equal(res.status, 200);
          assert.ok(res.body.equals(c.answer.body), `${c.name}: our answer`);
        }
        const metrics = await server.app.registry.metrics();
        await server.close();
        assert.match(metrics, /sis_shadow_failovers_total\{answer="ours"\} 3/);
        const failovers = lines.filter((l) => l.includes('fail-over'));
        assert.equal(failovers.length, 1, 'logged once per change of state');
      });

      it('legacy mode with SIS_SHADOW_FALLBACK=off: 502 with an empty body', async () => {
        const server = await startShadowed({
          SIS_SHADOW: 'legacy',
          SIS_LEGACY_URL: legacy.url,
          SIS_SHADOW_TIMEOUT_MS: '300',
          SIS_SHADOW_MAX_ANSWER_BYTES: '1048576',
          SIS_SHADOW_FALLBACK: 'off',
        });
        const res = await sendCase(server.url, TOKEN);
        await server.close();
        assert.equal(res.status, 502);
        assert.equal(res.body.length, 0);
      });
    });
  }

  it('legacy mode: an AuthCode the legacy may have received is not sent again by us (502)', async () => {
    const legacy = await startBadLegacy('hang');
    const server = await startShadowed({
      SIS_SHADOW: 'legacy',
      SIS_LEGACY_URL: legacy.url,
      SIS_SHADOW_TIMEOUT_MS: '300',
    });
    try {
      const res = await sendCase(server.url, AUTH_CODE);
      assert.equal(res.status, 502);
      // Its time-out sends our probe (a page, not the AuthCode) as well.
      assert.equal(legacy.hits - legacy.probes, 1, 'the AuthCode reached the legacy once');
    } finally {
      await server.app.close();
      await legacy.close();
    }
    assert.equal(await queuedSms(server), 0, 'no SMS queued by us');
  });

  it('compare mode: while a refusing legacy is left alone, comparisons are counted legacy-failed without asking it', async () => {
    const server = await startShadowed({
      SIS_SHADOW: 'compare',
      SIS_LEGACY_URL: `http://127.0.0.1:${await closedPort()}/Legacy/`,
    });
    const attempts = async (): Promise<number> =>
      Number(/^sis_shadow_legacy_seconds_count (\d+)/m.exec(await server.app.registry.metrics())?.[1] ?? 0);
    const res = await sendCase(server.url, TOKEN);
    assert.equal(res.status, 200);
    // The first comparison is tried and refused: the legacy is then left alone for a second.
    await eventually(async () => assert.equal(await attempts(), 1));
    for (const c of [TOKEN, LIST, TOKEN, LIST]) {
      const answer = await sendCase(server.url, c);
      assert.ok(answer.body.equals(c.answer.body), `${c.name}: our own answer`);
    }
    const tried = await attempts();
    const report = await finish(server);
    assert.equal(tried, 1, 'no exchange tried during the pause');
    assert.equal(report.totals['legacy-failed'], 5, JSON.stringify(report.groups));
    const list = report.groups.find((g) => g.operation === 'GetStudentSchool');
    assert.deepEqual(
      list && { binding: list.binding, result: list.result, count: list.count },
      { binding: 'httpget', result: 'legacy-failed', count: 2 },
      'counted under the labels of our answer',
    );
  });

  it('legacy mode: an AuthCode that never reached a refusing legacy is ours to take (fail-over, one SMS queued)', async () => {
    const server = await startShadowed({
      SIS_SHADOW: 'legacy',
      SIS_LEGACY_URL: `http://127.0.0.1:${await closedPort()}/Legacy/`,
      SIS_SHADOW_TIMEOUT_MS: '300',
    });
    try {
      const res = await sendCase(server.url, AUTH_CODE);
      assert.equal(res.status, 200);
      assert.ok(res.body.equals(AUTH_CODE.answer.body), 'our own answer');
    } finally {
      await server.app.close();
    }
    assert.equal(await queuedSms(server), 1, 'the code is sent once, by us');
  });
});
