/**
 * The legacy service partitioned (a TCP proxy in front of it stops forwarding: its connections
 * stay open, new ones are accepted and never answered): in legacy mode the client gets the
 * fail-over within SIS_SHADOW_TIMEOUT_MS, and at once after three requests in a row went
 * unanswered (one client's: our own probe, sent at the first, confirmed it), and the legacy's
 * answers again once the network is back; in compare mode our answer never waits for it.
 * test/shadow/quiet-spell.test.ts holds what one client cannot do with it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { eventually } from '../helpers/eventually.js';
import { LEGACY_BASE, goldenCases, startLegacyReplay } from '../helpers/legacy-replay.js';
import type { GoldenAnswer, LegacyReplay } from '../helpers/legacy-replay.js';
import { sendCase, startShadowed } from '../helpers/shadow-run.js';
import { TcpProxy } from '../helpers/tcp-proxy.js';
import type { TestServer } from '../helpers/test-server.js';

const cases = goldenCases();
const TOKEN = cases.find((c) => c.name === 'soap11_GetTokenDevice_known')!;
const LIST = cases.find((c) => c.name === 'get_GetStudentSchool_several')!;
/** The legacy's answer tells itself from ours. */
const THEIRS = (a: GoldenAnswer): GoldenAnswer => ({
  ...a,
  body: Buffer.from(a.body.toString('utf8').replace('tok-AAA-111', 'tok-AAA-LEGACY')),
});
const TIMEOUT_MS = 1500;
/** A loaded machine's margin on top of a deadline. */
const MARGIN_MS = 3000;

describe('the legacy service partitioned', { timeout: 90_000 }, () => {
  let legacy: LegacyReplay;
  let proxy: TcpProxy;
  before(async () => {
    legacy = await startLegacyReplay({ alter: new Map([[TOKEN.name, THEIRS]]) });
    const target = new URL(legacy.url);
    proxy = new TcpProxy(target.hostname, Number(target.port));
    await proxy.start();
  });
  after(async () => {
    await proxy?.close();
    await legacy?.close();
  });
  const viaProxy = (): string => `http://127.0.0.1:${proxy.port}${LEGACY_BASE}`;

  /** The answer to `c` and how long it took. */
  async function timed(server: TestServer, c: typeof TOKEN): Promise<{ body: string; ms: number; status: number }> {
    const started = Date.now();
    const res = await sendCase(server.url, c);
    return { body: res.body.toString('utf8'), ms: Date.now() - started, status: res.status };
  }

  it('legacy mode: the fail-over within the time-out, the legacy again once it is back', async (t) => {
    const server = await startShadowed({
      SIS_SHADOW: 'legacy',
      SIS_LEGACY_URL: viaProxy(),
      SIS_SHADOW_TIMEOUT_MS: String(TIMEOUT_MS),
    });
    try {
      assert.match((await timed(server, TOKEN)).body, /tok-AAA-LEGACY/, 'the legacy answers');
      proxy.pause();
      const waited: number[] = [];
      for (const c of [TOKEN, LIST, TOKEN, LIST, TOKEN]) {
        const answer = await timed(server, c);
        assert.equal(answer.status, 200, c.name);
        assert.equal(answer.body, c.answer.body.toString('utf8'), `${c.name}: our answer (fail-over)`);
        t.diagnostic(`${c.name}: the fail-over in ${answer.ms} ms (SIS_SHADOW_TIMEOUT_MS=${TIMEOUT_MS})`);
        assert.ok(answer.ms < TIMEOUT_MS + MARGIN_MS, `${c.name} answered in ${answer.ms} ms`);
        waited.push(answer.ms);
      }
      // Three requests in a row without an answer, and our probe without one, are a partition: the
      // next ones are failed over at once for a quiet spell instead of each waiting out the time-out.
      assert.ok(
        waited.slice(0, 3).every((ms) => ms >= TIMEOUT_MS - 100),
        `the first three waited out the time-out: ${waited}`,
      );
      assert.ok(
        waited.slice(3).every((ms) => ms < TIMEOUT_MS / 2),
        `then at once: ${waited}`,
      );
      proxy.resume();
      // After the spell our probe asks the legacy again, and its answer ends the fail-over.
      await eventually(async () => assert.match((await timed(server, TOKEN)).body, /tok-AAA-LEGACY/), 15_000);
      const metrics = await server.app.registry.metrics();
      const failovers = Number(/sis_shadow_failovers_total\{answer="ours"\} (\d+)/.exec(metrics)?.[1]);
      assert.ok(failovers >= 5, `the five, and those asked during the spell after the partition: ${failovers}`);
    } finally {
      proxy.resume();
      await server.close();
    }
  });

  it('compare mode: our answer does not wait for a partitioned legacy', async (t) => {
    const server = await startShadowed({
      SIS_SHADOW: 'compare',
      SIS_LEGACY_URL: viaProxy(),
      SIS_SHADOW_TIMEOUT_MS: '20000',
    });
    try {
      assert.equal((await timed(server, TOKEN)).status, 200);
      proxy.pause();
      for (const c of [TOKEN, LIST, TOKEN, LIST]) {
        const answer = await timed(server, c);
        assert.equal(answer.body, c.answer.body.toString('utf8'), `${c.name}: our answer`);
        t.diagnostic(`${c.name}: our answer in ${answer.ms} ms`);
        assert.ok(answer.ms < MARGIN_MS, `${c.name} answered in ${answer.ms} ms, the legacy's time-out is 20 s`);
      }
    } finally {
      proxy.resume();
      await server.close();
    }
  });
});
