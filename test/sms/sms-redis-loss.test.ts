/**
 * The SMS limits hold through a Redis loss (issue 45): a private Redis stopped mid-hour (its
 * counts gone with it) and started again, twice, and one partitioned (its counts kept, the
 * outage's codes missed), under real AuthCode calls over HTTP. The hour's budget, the range and
 * the address limits count every code accepted in the hour, whichever of Redis and the database
 * counted it: nothing starts from zero when counting moves to the database, nor when it moves back
 * to Redis, and no code is counted twice (parents below the limits are accepted). Once back, Redis
 * holds the counters the database found full, so it refuses them again by itself.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { after, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { eventually } from '../helpers/eventually.js';
import { PRIVATE_REDIS_SKIP, startRedis, stopRedis } from '../helpers/private-redis.js';
import { authCode, midHour, refusals, SMS_DEFAULTS } from '../helpers/sms-calls.js';
import { closedPort } from '../helpers/sms-gateway.js';
import { cleanupTargets, storeTargets } from '../helpers/store-targets.js';
import { TcpProxy } from '../helpers/tcp-proxy.js';
import { startTestServer } from '../helpers/test-server.js';
import type { TestServer } from '../helpers/test-server.js';

after(() => cleanupTargets());

const LIMITS = {
  SIS_SMS_HOURLY_BUDGET: '10',
  SIS_AUTH_CODES_PER_RANGE_HOUR: '3',
  SIS_AUTH_CODES_PER_ADDRESS_HOUR: '4',
};

/** The range every code of `inRange` is in. */
const RANGE = '+96650111';
const inRange = (i: number): string => `${RANGE}000${i}`;
/** A Saudi mobile in a range of its own (+96655 1xx). */
const alone = (i: number): string => `+966551${String(i).padStart(2, '0')}0000`;
/** The one address whose codes count towards its limit across the phases. */
const BUSY = '10.7.9.9';

/** Redis is used again: the SMS counters' connection is back (/readyz no longer names it). */
function redisBack(server: TestServer): Promise<void> {
  return eventually(async () => {
    const text = await (await fetch(`${server.url}/readyz`)).text();
    assert.ok(!text.includes('Redis'), text);
  }, 20_000);
}

/** The counter whose key ends in `suffix`, as the Redis at `url` holds it now (null: none). */
async function redisCounter(url: string, suffix: string): Promise<string | null> {
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0 });
  try {
    await client.connect();
    const keys = (await client.keys('sis:sms:*')).filter((k) => k.endsWith(suffix));
    assert.ok(keys.length <= 1, keys.join(' '));
    return keys.length === 0 ? null : await client.get(keys[0]!);
  } finally {
    client.disconnect();
  }
}

/** A service on a fresh database of `target` counting in the Redis at `redisUrl`, and how to ask it. */
async function service(target: (typeof storeTargets)[number], redisUrl: string) {
  const db = await target.fresh();
  const now = midHour();
  const server = await startTestServer({
    env: { ...SMS_DEFAULTS, SIS_DATABASE_URL: db.url, SIS_REDIS_URL: redisUrl, ...LIMITS },
    now,
  });
  let fresh = 0;
  return {
    db,
    server,
    /** The counters' window in their keys. */
    hour: `:h${Math.floor(now().getTime() / 3_600_000)}`,
    ask: async (phone: string, address: string): Promise<number> => (await authCode(server.url, phone, address)).status,
    /** A code to a phone of a range of its own, from an address of its own: only the budget counts it with others. */
    parent: async (): Promise<number> => (await authCode(server.url, alone(fresh), `10.7.200.${fresh++}`)).status,
  };
}

for (const target of storeTargets) {
  describe(
    `the SMS limits through a Redis loss, on ${target.name}`,
    { skip: target.skip ?? PRIVATE_REDIS_SKIP },
    () => {
      it(
        'the hour’s budget and the range and address limits are kept when Redis goes, and when it comes back empty',
        {
          timeout: 120_000,
        },
        async () => {
          const port = await closedPort();
          const redisUrl = `redis://127.0.0.1:${port}`;
          let redis: ChildProcess = await startRedis(port);
          const { db, server, hour, ask, parent } = await service(target, redisUrl);
          try {
            // With Redis: two codes in the range, three from the busy address; five of the budget's ten.
            const first = [await ask(inRange(1), '10.7.1.1'), await ask(inRange(2), '10.7.1.1')];
            for (let i = 0; i < 3; i++) first.push(await ask(alone(90 + i), BUSY));
            assert.deepEqual(first, [200, 200, 200, 200, 200]);
            assert.equal(await redisCounter(redisUrl, `:b${hour}`), '5', 'counted in Redis while it answers');

            // Redis lost (stopped: its counts are gone): the database goes on from five, not from zero.
            await stopRedis(redis);
            assert.deepEqual(
              [await ask(inRange(3), '10.7.2.1'), await ask(inRange(4), '10.7.2.2')],
              [200, 500],
              'the range: its third code, then refused',
            );
            assert.deepEqual(
              [await ask(alone(93), BUSY), await ask(alone(94), BUSY)],
              [200, 500],
              'the address: its fourth code, then refused',
            );

            // Redis back, empty: the database's counts hold; parents below the limits are accepted (seven, then nine of ten).
            redis = await startRedis(port);
            await redisBack(server);
            assert.equal(await ask(inRange(5), '10.7.3.1'), 500, 'the range stays full');
            assert.equal(await ask(alone(95), BUSY), 500, 'the address stays full');
            assert.deepEqual([await parent(), await parent()], [200, 200], 'no code counted twice');
            assert.equal(await redisCounter(redisUrl, `:r:${RANGE}${hour}`), '3', 'Redis holds the full range again');

            // Lost again: the budget's tenth code, then refused.
            await stopRedis(redis);
            assert.deepEqual([await parent(), await parent()], [200, 500], 'the budget: its tenth code, then refused');

            // Back, empty again: still refused, and Redis holds the full budget again.
            redis = await startRedis(port);
            await redisBack(server);
            assert.deepEqual([await parent(), await ask(inRange(6), '10.7.4.1')], [500, 500]);
            assert.equal(await redisCounter(redisUrl, `:b${hour}`), '10', 'Redis refuses by itself again');

            assert.deepEqual(Object.fromEntries(await refusals(server.url)), {
              range: 2,
              address: 2,
              'budget-hourly': 3,
            });
          } finally {
            await server.close();
            await stopRedis(redis);
          }
          assert.equal(Number((await db.sql('select count(*) as n from outbox'))[0]!.n), 10, 'ten codes sent in all');
        },
      );

      it(
        'a partition: Redis keeps its counts but misses the codes of the outage; nothing is given twice',
        {
          timeout: 120_000,
        },
        async () => {
          const port = await closedPort();
          const redis = await startRedis(port);
          const proxy = new TcpProxy('127.0.0.1', port);
          const redisUrl = `redis://127.0.0.1:${await proxy.start()}`;
          const directUrl = `redis://127.0.0.1:${port}`;
          const { db, server, hour, ask, parent } = await service(target, redisUrl);
          try {
            // With Redis: two codes in the range, two more of the budget's ten.
            assert.deepEqual(
              [await ask(inRange(1), '10.7.1.1'), await ask(inRange(2), '10.7.1.2'), await parent(), await parent()],
              [200, 200, 200, 200],
            );
            // Partitioned (the first code waits for SIS_REDIS_TIMEOUT_MS): the range's third code, then refused; four parents.
            proxy.pause();
            assert.deepEqual(
              [await ask(inRange(3), '10.7.2.1'), await ask(inRange(4), '10.7.2.2')],
              [200, 500],
              'the range: its third code, then refused',
            );
            assert.deepEqual([await parent(), await parent(), await parent(), await parent()], [200, 200, 200, 200]);
            assert.equal(await redisCounter(directUrl, `:b${hour}`), '4', 'Redis never saw the outage’s codes');

            // Back, holding its old counts (range 2, budget 4): the database's (3 and 9) hold.
            proxy.resume();
            await redisBack(server);
            assert.equal(await ask(inRange(5), '10.7.3.1'), 500, 'the range stays full');
            assert.deepEqual([await parent(), await parent()], [200, 500], 'the budget: its tenth code, then refused');
            assert.equal(await redisCounter(directUrl, `:r:${RANGE}${hour}`), '3');
            assert.equal(await redisCounter(directUrl, `:b${hour}`), '10');
            assert.deepEqual(Object.fromEntries(await refusals(server.url)), { range: 2, 'budget-hourly': 1 });
          } finally {
            await server.close();
            await proxy.close();
            await stopRedis(redis);
          }
          assert.equal(Number((await db.sql('select count(*) as n from outbox'))[0]!.n), 10, 'ten codes sent in all');
        },
      );
    },
  );
}
