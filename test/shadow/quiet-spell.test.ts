/**
 * Legacy mode's quiet spell needs evidence no client chooses (issue 46 point 1): one client whose
 * own requests are slow at the legacy (GetStudentSchool held 1.5 s, SIS_SHADOW_TIMEOUT_MS=1000)
 * and sent every 100 ms times out alone; every other client's request still goes to the legacy
 * and gets its answer. A legacy really down still fails over at once after three time-outs in a
 * row (test/shadow/partition.test.ts, one client: our probe confirms it), and here for several
 * clients at once. The start warns when AuthCode may be ours in a fail-over with no SMS gateway.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { eventually } from '../helpers/eventually.js';
import { goldenCases, startLegacyReplay } from '../helpers/legacy-replay.js';
import type { GoldenAnswer, GoldenCase, LegacyReplay } from '../helpers/legacy-replay.js';
import { logCollector } from '../helpers/log-collector.js';
import { rawRequest } from '../helpers/raw-http.js';
import type { RawResponse } from '../helpers/raw-http.js';
import { startShadowed } from '../helpers/shadow-run.js';
import { closedPort } from '../helpers/sms-gateway.js';
import { TcpProxy } from '../helpers/tcp-proxy.js';

const cases = goldenCases();
const TOKEN = cases.find((c) => c.name === 'soap11_GetTokenDevice_known')!;
const LIST = cases.find((c) => c.name === 'get_GetStudentSchool_several')!;
const MARKS = cases.find((c) => c.name === 'get_GetStudentsMarks')!;
const THEIRS = (a: GoldenAnswer): GoldenAnswer => ({
  ...a,
  body: Buffer.from(a.body.toString('utf8').replace('tok-AAA-111', 'tok-AAA-LEGACY')),
});
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A golden request as the client `address` sends it through the trusted proxy (X-Forwarded-For). */
function sendAs(url: string, c: GoldenCase, address: string): Promise<RawResponse> {
  return rawRequest(
    url,
    {
      method: c.method,
      path: c.path,
      headers: [...c.headers, ['X-Forwarded-For', address]],
      ...(c.body ? { body: c.body } : {}),
    },
    { timeoutMs: 30_000 },
  );
}

describe('the quiet spell needs evidence no client chooses', { timeout: 120_000 }, () => {
  let legacy: LegacyReplay;
  before(async () => {
    legacy = await startLegacyReplay({
      alter: new Map([[TOKEN.name, THEIRS]]),
      delays: new Map([[LIST.name, 1500]]),
    });
  });
  after(() => legacy?.close());

  it("one client's slow requests delay only that client: 40 others all answered by the legacy", async (t) => {
    const server = await startShadowed({
      SIS_SHADOW: 'legacy',
      SIS_LEGACY_URL: legacy.url,
      SIS_SHADOW_TIMEOUT_MS: '1000',
      SIS_SHADOW_FALLBACK: 'off',
      SIS_TRUSTED_PROXIES: '127.0.0.1',
    });
    try {
      // The one client: GetStudentSchool, which this legacy holds 1.5 s, every 100 ms.
      let attacking = true;
      const slow: Promise<RawResponse>[] = [];
      const attack = (async () => {
        while (attacking) {
          slow.push(sendAs(server.url, LIST, '203.0.113.66'));
          await sleep(100);
        }
      })();
      // Once its first time-outs are in (three in a row are past 1.3 s), 40 others, one every 75 ms.
      await sleep(1300);
      const others: Promise<RawResponse>[] = [];
      for (let i = 1; i <= 40; i++) {
        others.push(sendAs(server.url, TOKEN, `198.51.100.${i}`));
        await sleep(75);
      }
      const answers = await Promise.all(others);
      attacking = false;
      await attack;
      const own = await Promise.all(slow);
      const fromLegacy = answers.filter((a) => a.status === 200 && a.body.includes('tok-AAA-LEGACY')).length;
      const timedOut = own.filter((a) => a.status === 502).length;
      t.diagnostic(
        `others answered by the legacy: ${fromLegacy} of 40; the slow client's 502s: ${timedOut} of ${own.length}`,
      );
      assert.deepEqual(
        answers.map((a) => a.status),
        Array<number>(40).fill(200),
        'every other client answered',
      );
      assert.equal(fromLegacy, 40, "every other client's answer is the legacy's");
      assert.ok(timedOut >= 10, `the slow client's own requests time out (502): ${timedOut} of ${own.length}`);
      // The slow client's requests (and our probes) reached the legacy: they were forwarded, not failed over unsent.
      const listSeen = legacy.received.filter((n) => n === LIST.name).length;
      assert.ok(listSeen >= own.length - 1, `${listSeen} of ${own.length} slow requests reached the legacy`);
    } finally {
      await server.close();
    }
  });

  it('a legacy partitioned under several clients: three time-outs in a row, then the fail-over at once', async (t) => {
    const target = new URL(legacy.url);
    const proxy = new TcpProxy(target.hostname, Number(target.port));
    await proxy.start();
    const server = await startShadowed({
      SIS_SHADOW: 'legacy',
      SIS_LEGACY_URL: `http://127.0.0.1:${proxy.port}${target.pathname}`,
      SIS_SHADOW_TIMEOUT_MS: '1500',
      SIS_TRUSTED_PROXIES: '127.0.0.1',
    });
    try {
      assert.match((await sendAs(server.url, TOKEN, '198.51.100.1')).body.toString(), /tok-AAA-LEGACY/);
      proxy.pause();
      // Three clients, two operations, at once: each waits out the time-out.
      const started = Date.now();
      const first = await Promise.all([
        sendAs(server.url, TOKEN, '198.51.100.1'),
        sendAs(server.url, LIST, '198.51.100.2'),
        sendAs(server.url, TOKEN, '198.51.100.3'),
      ]);
      const waited = Date.now() - started;
      assert.ok(waited >= 1400, `the first three waited out the time-out: ${waited} ms`);
      for (const [i, a] of first.entries()) assert.equal(a.status, 200, `request ${i}: ours (fail-over)`);
      // Then at once, for any client: the spell began with the third time-out.
      for (const c of [TOKEN, LIST, TOKEN]) {
        const at = Date.now();
        const answer = await sendAs(server.url, c, '198.51.100.9');
        const ms = Date.now() - at;
        t.diagnostic(`${c.name} during the spell: ${answer.status} in ${ms} ms`);
        assert.equal(answer.status, 200);
        assert.ok(answer.body.equals(c.answer.body), `${c.name}: our answer`);
        assert.ok(ms < 750, `failed over at once, not after the time-out: ${ms} ms`);
      }
    } finally {
      proxy.resume();
      await server.close();
      await proxy.close();
    }
  });

  it('clients that choose two slow operations start a spell only until our probe answers', async () => {
    const slowTwo = await startLegacyReplay({
      alter: new Map([[TOKEN.name, THEIRS]]),
      delays: new Map([
        [LIST.name, 1500],
        [MARKS.name, 1500],
      ]),
    });
    const server = await startShadowed({
      SIS_SHADOW: 'legacy',
      SIS_LEGACY_URL: slowTwo.url,
      SIS_SHADOW_TIMEOUT_MS: '1000',
      SIS_SHADOW_FALLBACK: 'off',
      SIS_TRUSTED_PROXIES: '127.0.0.1',
    });
    try {
      // Three clients, two operations the legacy is slow at, at once: a spell on the clients' evidence…
      const own = await Promise.all([
        sendAs(server.url, LIST, '203.0.113.1'),
        sendAs(server.url, MARKS, '203.0.113.2'),
        sendAs(server.url, LIST, '203.0.113.3'),
      ]);
      assert.deepEqual(
        own.map((a) => a.status),
        [502, 502, 502],
      );
      // …which our probe, answered, ends well before its second is out.
      const sent = Date.now();
      await eventually(async () => {
        const answer = await sendAs(server.url, TOKEN, '198.51.100.1');
        assert.match(answer.body.toString(), /tok-AAA-LEGACY/, `${answer.status} after ${Date.now() - sent} ms`);
      }, 700);
      assert.ok(slowTwo.received.includes('probe'), 'our probe asked the legacy');
    } finally {
      await server.close();
      await slowTwo.close();
    }
  });

  it('warns once at start when AuthCode may be ours in a fail-over and no SMS gateway is set', async () => {
    const legacyUrl = `http://127.0.0.1:${await closedPort()}/Legacy/`;
    const warnings = async (env: Record<string, string>): Promise<number> => {
      const logs = logCollector();
      const server = await startShadowed(
        { SIS_LEGACY_URL: legacyUrl, LOG_LEVEL: 'warn', ...env },
        undefined,
        logs.stream,
      );
      await server.close();
      return logs.lines.filter(
        (l) => l['level'] === 40 && String(l['msg']).includes('SIS_SHADOW_FALLBACK=on and no SMS gateway'),
      ).length;
    };
    assert.equal(await warnings({ SIS_SHADOW: 'legacy' }), 1, 'legacy mode, fallback on, no gateway');
    assert.equal(await warnings({ SIS_SHADOW: 'compare,AuthCode=legacy' }), 1, 'AuthCode in legacy mode');
    assert.equal(await warnings({ SIS_SHADOW: 'legacy', SIS_SHADOW_FALLBACK: 'off' }), 0, 'fallback off: a 502');
    assert.equal(await warnings({ SIS_SHADOW: 'legacy,AuthCode=compare' }), 0, 'AuthCode always ours');
    const gateway = {
      SIS_SMS_WEBHOOK_URL: 'http://127.0.0.1:9/sms',
      SIS_SMS_WEBHOOK_SECRET: 'shadow-test-secret-of-32-bytes-or-more',
    };
    assert.equal(await warnings({ SIS_SHADOW: 'legacy', ...gateway }), 0, 'a gateway is set');
  });
});
