/**
 * One line per dependency state change, whichever part of the service notices (issue 35): a
 * private Redis (never the machine's shared one) stopped for 5 s and started again under a load
 * that uses it through both of its connections, the rate limiter and AuthCode's SMS counters.
 * Each noticed the outage many times; the instance writes one line when Redis went, naming what
 * both do meanwhile, and one when it is back, with the count of failed attempts.
 * The legacy service beside ours (legacy mode) likewise: stopped, requests fail over to ours, one
 * line; answering again, one line. (A PostgreSQL restart under load and its lines:
 * test/deploy/database-restart.test.ts.)
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { LOG_FLUSH_MS } from '../../src/logging/logger.js';
import { eventually } from '../helpers/eventually.js';
import { REDIS_SERVER, startRedis, stopRedis } from '../helpers/private-redis.js';
import { startServe, stopServe } from '../helpers/serve-process.js';
import { closedPort } from '../helpers/sms-gateway.js';

describe('dependency state lines', () => {
  it(
    'a Redis restart under load: one line when it goes, one when it is back, whichever connection noticed',
    {
      skip: REDIS_SERVER === null ? 'redis-server is not installed: the Redis restart test is skipped' : false,
      timeout: 60_000,
    },
    async () => {
      const port = await closedPort();
      let redis = await startRedis(port);
      const dir = mkdtempSync(join(tmpdir(), 'sis-redis-restart-'));
      const s = await startServe(`sqlite:${join(dir, 'sis.db')}`, {
        SIS_DEMO_DATA: 'true',
        SIS_RATE_LIMIT: '100000/1s',
        SIS_REDIS_URL: `redis://127.0.0.1:${port}`,
        // A velocity counter on: AuthCode counts in Redis, through a connection of its own.
        SIS_AUTH_CODES_PER_ADDRESS_HOUR: '1000000',
        SIS_AUTH_CODES_PER_HOUR: '0',
        SIS_SHUTDOWN_GRACE_MS: '0',
      });
      let running = true;
      let n = 0;
      const statuses: number[] = [];
      const client = async (): Promise<void> => {
        while (running) {
          const token = await fetch(`${s.url}/PushNotificationMobile.asmx/GetTokenDevice?id=1`);
          await token.arrayBuffer();
          const code = await fetch(`${s.url}/AuthCodeSending.asmx/AuthCode`, {
            method: 'POST',
            headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
            body: `code=1234&phone=${encodeURIComponent(`+1555${String(1_000_000 + n++).slice(1)}`)}`,
          });
          await code.arrayBuffer();
          statuses.push(token.status, code.status);
        }
      };
      try {
        const load = [client(), client(), client()];
        await new Promise((resolve) => setTimeout(resolve, 1000));
        await stopRedis(redis);
        await new Promise((resolve) => setTimeout(resolve, 5000));
        redis = await startRedis(port);
        const lines = (): Record<string, unknown>[] => s.logs.filter((l) => l['dependency'] === 'Redis');
        await eventually(
          () => assert.ok(lines().some((l) => String(l['msg']).startsWith('Redis back to normal after '))),
          20_000,
        );
        await new Promise((resolve) => setTimeout(resolve, 1500));
        running = false;
        await Promise.all(load);
        await new Promise((resolve) => setTimeout(resolve, LOG_FLUSH_MS + 300));

        assert.ok(statuses.length > 100, `${statuses.length} answers`);
        assert.ok(
          statuses.every((status) => status === 200),
          'every request answered: let through, AuthCode counted in the database meanwhile',
        );
        const all = lines();
        assert.equal(all.length, 2, JSON.stringify(all, null, 1));
        const [down, back] = all;
        assert.equal(down!['level'], 40);
        assert.equal(
          down!['msg'],
          'Redis unreachable: AuthCode counts its velocity limits in the database until it answers again; ' +
            'rate limits (SIS_RATE_LIMIT) are not enforced: requests are let through until it answers again; ' +
            'it is retried; check SIS_REDIS_URL and the Redis server',
        );
        assert.match(String(back!['msg']), /^Redis back to normal after \d+ s \((\d+) failed calls meanwhile\)$/);
        assert.ok(Number(back!['failures']) > 10, `${String(back!['failures'])} failed attempts counted`);
      } finally {
        running = false;
        await stopServe(s);
        await stopRedis(redis);
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );

  it('the legacy service stopped and started under load: one line each way', { timeout: 60_000 }, async () => {
    const port = await closedPort();
    // A stand-in legacy service: answers every request the same (comparisons then differ, not fail).
    const legacy = (): Promise<Server> =>
      new Promise((resolve) => {
        const server = createServer((req, res) => {
          req.resume();
          res.writeHead(200, { 'Content-Type': 'text/xml; charset=utf-8' });
          res.end('<?xml version="1.0" encoding="utf-8"?><string xmlns="http://tempuri.org/">legacy</string>');
        });
        server.listen(port, '127.0.0.1', () => resolve(server));
      });
    const closed = (server: Server): Promise<void> =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    let server = await legacy();
    const dir = mkdtempSync(join(tmpdir(), 'sis-legacy-restart-'));
    const s = await startServe(`sqlite:${join(dir, 'sis.db')}`, {
      SIS_DEMO_DATA: 'true',
      SIS_SHADOW: 'legacy',
      SIS_LEGACY_URL: `http://127.0.0.1:${port}/`,
      SIS_SHUTDOWN_GRACE_MS: '0',
    });
    const statuses: number[] = [];
    let running = true;
    const client = async (): Promise<void> => {
      while (running) {
        const res = await fetch(`${s.url}/PushNotificationMobile.asmx/GetTokenDevice?id=1`);
        await res.arrayBuffer();
        statuses.push(res.status);
      }
    };
    try {
      const load = [client(), client()];
      await new Promise((resolve) => setTimeout(resolve, 1000));
      await closed(server);
      await new Promise((resolve) => setTimeout(resolve, 3000));
      server = await legacy();
      const lines = (): Record<string, unknown>[] => s.logs.filter((l) => l['dependency'] === 'legacy service');
      await eventually(() => assert.equal(lines().length, 2, JSON.stringify(lines())), 15_000);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      running = false;
      await Promise.all(load);
      await new Promise((resolve) => setTimeout(resolve, LOG_FLUSH_MS + 300));
      assert.ok(statuses.length > 50 && statuses.every((status) => status === 200), 'every request answered');
      const [down, back] = lines();
      assert.equal(lines().length, 2);
      assert.equal(
        down!['msg'],
        'legacy service not answering: comparisons count legacy-failed, clients of legacy mode get our answers (fail-over); check SIS_LEGACY_URL and the legacy service',
      );
      assert.match(String(back!['msg']), /^legacy service back to normal after \d+ s \(\d+ failed calls meanwhile\)$/);
    } finally {
      running = false;
      await stopServe(s);
      await closed(server);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
