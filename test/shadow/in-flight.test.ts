/**
 * The comparison cannot be stopped from outside: every copy gives its in-flight place back
 * whatever its fate. A few hundred requests whose copies fail each way a legacy service can fail
 * them (it closes the connection, stalls past the time-out, answers more than the cap, refuses
 * connections; and a request with two Host headers), then ordinary ones: every ordinary one is
 * compared. Skips for the cap are counted apart (the metric, the report's `overCap`, logged once
 * a minute), and `sis shadow report --check` fails while they exceed --max-over-cap.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { eventually } from '../helpers/eventually.js';
import { rawRequest } from '../helpers/raw-http.js';
import { databaseUrlOf, finish, shadowCli, startShadowed } from '../helpers/shadow-run.js';
import { closedPort } from '../helpers/sms-gateway.js';
import type { TestServer } from '../helpers/test-server.js';

const TOKEN = '/PushNotificationMobile.asmx/GetTokenDevice';
const CAP = '8';

/**
 * A legacy service that fails each copy as its `id` says: `close` (the connection dropped),
 * `stall` (never answers), `huge` (2 MB, over the cap); any other id is answered at once (a body
 * unlike ours: `different`, which is compared).
 */
async function misbehavingLegacy(port = 0): Promise<{ url: string; server: Server; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    const id = new URL(req.url ?? '/', 'http://x').searchParams.get('id');
    req.resume();
    if (id === 'close') return void req.socket.destroy();
    if (id === 'stall') return;
    if (id === 'huge') return void res.writeHead(200, { 'Content-Type': 'text/xml' }).end(Buffer.alloc(2 << 20, 0x20));
    res.writeHead(200, { 'Content-Type': 'text/xml; charset=utf-8' }).end('<legacy/>');
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The service's comparisons by result, from /metrics. */
async function compared(server: TestServer): Promise<Record<string, number>> {
  const text = (await rawRequest(server.url, { method: 'GET', path: '/metrics' })).body.toString();
  const out: Record<string, number> = {};
  for (const m of text.matchAll(/^sis_shadow_comparisons_total\{[^}]*result="([^"]+)"\} (\d+)$/gm))
    out[m[1]!] = (out[m[1]!] ?? 0) + Number(m[2]);
  const overCap = /^sis_shadow_over_cap_total (\d+)$/m.exec(text);
  out['over-cap'] = Number(overCap?.[1] ?? 0);
  return out;
}

const total = (counts: Record<string, number>): number =>
  Object.entries(counts).reduce((n, [k, v]) => (k === 'over-cap' ? n : n + v), 0);

/** Sends `n` requests with `id`, 16 at a time; how many were answered 200 (so reached the shadow). */
async function flood(server: TestServer, id: string, n: number, headers: [string, string][] = []): Promise<number> {
  const parallel = 16;
  let answered = 0;
  for (let sent = 0; sent < n; sent += parallel) {
    await Promise.all(
      Array.from({ length: Math.min(parallel, n - sent) }, () =>
        rawRequest(server.url, { method: 'GET', path: `${TOKEN}?id=${id}`, headers }).then((res) => {
          // Two Host headers may be refused at the door (400, RFC 9112), before the shadow.
          assert.ok(res.status === 200 || (headers.length > 0 && res.status === 400), `answered ${res.status}`);
          if (res.status === 200) answered++;
        }),
      ),
    );
  }
  return answered;
}

/** Ordinary requests, one at a time, each until it is counted: every one must be compared (`different`). */
async function ordinary(server: TestServer, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    const before = await compared(server);
    await rawRequest(server.url, { method: 'GET', path: `${TOKEN}?id=1` });
    await eventually(async () => assert.equal(total(await compared(server)), total(before) + 1));
    const after = await compared(server);
    assert.equal(after['different'] ?? 0, (before['different'] ?? 0) + 1, `ordinary request ${i + 1} was compared`);
  }
}

describe('compare mode cannot be stopped from outside', () => {
  it('copies that fail every way give their places back: the ordinary ones after are all compared', async () => {
    const legacy = await misbehavingLegacy();
    const lines: Record<string, unknown>[] = [];
    const log = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString().split('\n')) if (line !== '') lines.push(JSON.parse(line));
        done();
      },
    });
    const server = await startShadowed(
      {
        SIS_SHADOW: 'compare',
        SIS_LEGACY_URL: legacy.url,
        SIS_SHADOW_TIMEOUT_MS: '300',
        SIS_SHADOW_MAX_IN_FLIGHT: CAP,
        SIS_SHADOW_MAX_ANSWER_BYTES: '65536',
        SIS_SHADOW_RECHECK: 'off',
        LOG_LEVEL: 'warn',
      },
      undefined,
      log,
    );
    try {
      let reached = await flood(server, 'close', 64);
      reached += await flood(server, 'stall', 64);
      reached += await flood(server, 'huge', 64);
      // Two Host headers: answered here as one request, its copy as the legacy takes it.
      reached += await flood(server, 'dup', 64, [
        ['Host', 'a.example'],
        ['Host', 'b.example'],
      ]);
      // Every one is counted once, compared or not (two Host headers may be refused before the
      // shadow): none is left holding a place.
      await eventually(async () => assert.equal(total(await compared(server)), reached), 20_000);
      await ordinary(server, 20);
      const counts = await compared(server);
      assert.ok((counts['legacy-failed'] ?? 0) >= 3, JSON.stringify(counts));
      // A flood of stalling copies is over the cap of 8: those skips are counted apart, and said.
      assert.ok(counts['over-cap']! > 0, JSON.stringify(counts));
      assert.ok(
        lines.some((l) => /SIS_SHADOW_MAX_IN_FLIGHT comparisons are in flight/.test(String(l['msg']))),
        JSON.stringify(lines.map((l) => l['msg'])),
      );
      const report = await finish(server);
      assert.ok(report.overCap > 0 && report.overCap <= report.totals.skipped, JSON.stringify(report.totals));
    } finally {
      await server.close();
      await legacy.close();
    }
  });

  it('copies refused while the legacy is down give their places back: once it is up, every ordinary one is compared', async () => {
    const port = await closedPort();
    const server = await startShadowed({
      SIS_SHADOW: 'compare',
      SIS_LEGACY_URL: `http://127.0.0.1:${port}/`,
      SIS_SHADOW_TIMEOUT_MS: '300',
      SIS_SHADOW_MAX_IN_FLIGHT: CAP,
      SIS_SHADOW_RECHECK: 'off',
    });
    let legacy: Awaited<ReturnType<typeof misbehavingLegacy>> | undefined;
    try {
      await flood(server, '1', 128);
      await eventually(async () => assert.equal(total(await compared(server)), 128), 20_000);
      legacy = await misbehavingLegacy(port);
      // The legacy is left alone for a pause after refusing (at most a few seconds here): until
      // its end, copies are counted legacy-failed at once.
      await eventually(async () => {
        const before = await compared(server);
        await rawRequest(server.url, { method: 'GET', path: `${TOKEN}?id=1` });
        await eventually(async () => assert.equal(total(await compared(server)), total(before) + 1));
        assert.equal((await compared(server))['different'] ?? 0, (before['different'] ?? 0) + 1);
      }, 40_000);
      await ordinary(server, 20);
    } finally {
      await server.close();
      await legacy?.close();
    }
  });
});

describe('sis shadow report --check and the cap', () => {
  it('fails while comparisons skipped for the cap exceed --max-over-cap, and says so', async () => {
    const legacy = await misbehavingLegacy();
    const server = await startShadowed({
      SIS_SHADOW: 'compare',
      SIS_LEGACY_URL: legacy.url,
      SIS_SHADOW_TIMEOUT_MS: '300',
      SIS_SHADOW_MAX_IN_FLIGHT: '1',
      SIS_SHADOW_RECHECK: 'off',
    });
    try {
      // One place: a stalling copy holds it, and the next ones are skipped for the cap.
      await flood(server, 'stall', 16);
      await eventually(async () => assert.equal(total(await compared(server)), 16), 20_000);
      await server.app.close();
      const env = { SIS_DATABASE_URL: databaseUrlOf(server) };
      const failed = await shadowCli(['report', '--check', '--max-legacy-failed', '100'], env);
      assert.equal(failed.code, 1, failed.out + failed.err);
      assert.match(
        failed.out,
        /^skipped: \d+ comparisons? not made for the in-flight cap \(SIS_SHADOW_MAX_IN_FLIGHT\), over 0 \(--max-over-cap\)/m,
      );
      const passed = await shadowCli(['report', '--check', '--max-legacy-failed', '100', '--max-over-cap', '100'], env);
      assert.equal(passed.code, 0, passed.out + passed.err);
    } finally {
      await server.close();
      await legacy.close();
    }
  });
});
