/**
 * Operation by operation, on both stores, beside a legacy service replaying the golden exchanges:
 * SIS_SHADOW's default and overrides (an operation, a service file) decide each request's mode,
 * SOAP's included (by its SOAPAction); the report says which mode each result was taken in; a
 * tester's X-Shadow-Route is honoured from SIS_SHADOW_ROUTE_FROM only; a name the contract lacks
 * stops the start, naming the closest.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, describe, it } from 'node:test';
import { goldenCases, startLegacyReplay } from '../helpers/legacy-replay.js';
import type { GoldenCase } from '../helpers/legacy-replay.js';
import { finish, sendCase, startShadowed } from '../helpers/shadow-run.js';
import { cleanupTargets, storeTargets } from '../helpers/store-targets.js';

after(cleanupTargets);

const named = (name: string): GoldenCase => goldenCases().find((c) => c.name === name)!;
const routed = (c: GoldenCase, to: string): GoldenCase => ({ ...c, headers: [...c.headers, ['X-Shadow-Route', to]] });

const TOKEN_GET = 'get_GetTokenDevice_known';
const TOKEN_SOAP = 'soap11_GetTokenDevice_known';
const KEYS_SOAP = 'soap11_GetServerKeyAndSender';
const LIST_GET = 'get_GetStudentSchool_several';
const AUTH_CODE = 'get_AuthCode';
const MODES = 'legacy,GetTokenDevice=off,NotificationNotes.asmx=compare';

for (const target of storeTargets) {
  describe(`operation by operation on ${target.name}`, { skip: target.skip ?? undefined }, () => {
    it('each request in its operation’s or service file’s mode, the report saying which', async () => {
      const legacy = await startLegacyReplay();
      const db = await target.fresh();
      try {
        const server = await startShadowed({ SIS_SHADOW: MODES, SIS_LEGACY_URL: legacy.url }, db.url);
        for (const name of [TOKEN_GET, TOKEN_SOAP, KEYS_SOAP, LIST_GET]) {
          const res = await sendCase(server.url, named(name));
          assert.equal(res.status, named(name).answer.status, name);
        }
        const report = await finish(server, db.url);
        // GetTokenDevice is off (over GET and SOAP alike); the rest go to the legacy.
        assert.deepEqual([...legacy.received].sort(), [KEYS_SOAP, LIST_GET].sort());
        assert.deepEqual(legacy.copies[legacy.received.indexOf(LIST_GET)], true, 'compare mode sends a copy');
        assert.deepEqual(legacy.copies[legacy.received.indexOf(KEYS_SOAP)], false, 'legacy mode sends the request');
        assert.deepEqual(
          report.groups.map((g) => [g.operation, g.mode, g.result]),
          [
            ['GetStudentSchool', 'compare', 'identical'],
            ['GetServerKeyAndSender', 'legacy', 'identical'],
          ],
        );
      } finally {
        await legacy.close();
      }
    });

    it('X-Shadow-Route from a trusted address routes its own request; an AuthCode is still never sent twice', async () => {
      const legacy = await startLegacyReplay();
      const db = await target.fresh();
      try {
        const server = await startShadowed(
          { SIS_SHADOW: 'compare', SIS_LEGACY_URL: legacy.url, SIS_SHADOW_ROUTE_FROM: '127.0.0.0/8,::1' },
          db.url,
        );
        // `legacy`: the legacy answers (and AuthCode is ours to validate only); `ours`: ours alone.
        await sendCase(server.url, routed(named(TOKEN_GET), 'legacy'));
        await sendCase(server.url, routed(named(AUTH_CODE), 'legacy'));
        await sendCase(server.url, routed(named(LIST_GET), 'ours'));
        await sendCase(server.url, routed(named(AUTH_CODE), 'ours'));
        const report = await finish(server, db.url);
        assert.deepEqual([...legacy.received].sort(), [AUTH_CODE, TOKEN_GET].sort());
        assert.deepEqual(legacy.copies, [false, false], 'routed to the legacy, they are the requests themselves');
        const authCodes = await db.sql('select count(*) as n from auth_codes');
        assert.equal(Number(authCodes[0]!['n']), 1, 'the AuthCode routed to ours alone is the one stored here');
        assert.ok(
          report.groups.every((g) => g.mode === 'legacy'),
          JSON.stringify(report.groups),
        );
      } finally {
        await legacy.close();
      }
    });

    it('X-Shadow-Route from anyone else is ignored, and logged', async () => {
      const legacy = await startLegacyReplay();
      const db = await target.fresh();
      const lines: Record<string, unknown>[] = [];
      const log = new Writable({
        write(chunk: Buffer, _encoding, done) {
          for (const line of chunk.toString().split('\n')) if (line !== '') lines.push(JSON.parse(line));
          done();
        },
      });
      try {
        const server = await startShadowed(
          { SIS_SHADOW: 'compare', SIS_LEGACY_URL: legacy.url, SIS_SHADOW_ROUTE_FROM: '10.9.9.9', LOG_LEVEL: 'warn' },
          db.url,
          log,
        );
        await sendCase(server.url, routed(named(TOKEN_GET), 'ours'));
        await finish(server, db.url);
        assert.deepEqual(legacy.received, [TOKEN_GET], 'compared as any request');
        assert.ok(
          lines.some((l) => /X-Shadow-Route ignored/.test(String(l['msg']))),
          JSON.stringify(lines.map((l) => l['msg'])),
        );
      } finally {
        await legacy.close();
      }
    });

    it('a name the contract lacks stops the start, naming the closest', async () => {
      const db = await target.fresh();
      await assert.rejects(
        startShadowed({ SIS_SHADOW: 'legacy,GetTokenDevise=off', SIS_LEGACY_URL: 'http://127.0.0.1:9/' }, db.url),
        /SIS_SHADOW names "GetTokenDevise", which is neither an operation nor a service file; did you mean GetTokenDevice\?/,
      );
    });
  });
}
