/** API keys, address allow-lists and rate limits, over real HTTP; refusals never reach the store. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { hashKey, presentedKey } from '../../src/access/access.js';
import { forwardMethods } from '../../src/store/forward-store.js';
import { openStore } from '../../src/store/open/open-store.js';
import type { ServiceStore } from '../../src/store/store.js';
import { rawRequest } from '../helpers/raw-http.js';
import { startTestServer } from '../helpers/test-server.js';
import type { TestServer } from '../helpers/test-server.js';

const KEY = 'k-7f3a9c';
const TOKEN_GET = '/PushNotificationMobile.asmx/GetTokenDevice?id=1';
const SCHOOL_GET = '/NotificationNotes.asmx/GetStudentSchool?school_base_url=x&show_active=1';
const dataset = { devices: [{ id: '1', token: 'tok-1' }] };
const basic = (user: string, password: string): string =>
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

/** A real store that counts the calls operations make. */
async function countingStore(): Promise<{ store: ServiceStore; calls: () => number }> {
  const inner = await openStore('sqlite::memory:');
  let calls = 0;
  // Every call an operation makes is counted; loading, checks and the cache's version are not.
  const setup = new Set(['importDataset', 'isEmpty', 'ping', 'close', 'dataVersion']);
  const counted = forwardMethods<ServiceStore>(
    inner,
    () => inner,
    (call, name) => {
      if (!setup.has(name)) calls++;
      return call();
    },
  );
  return { store: { ...counted, retention: inner.retention }, calls: () => calls };
}

const get = (url: string, path: string, headers: [string, string][] = []) =>
  rawRequest(url, { method: 'GET', path, headers });

describe('API keys', () => {
  let server: TestServer;
  let calls: () => number;
  before(async () => {
    const counting = await countingStore();
    calls = counting.calls;
    server = await startTestServer({
      store: counting.store,
      dataset,
      env: {
        SIS_API_KEYS: `${hashKey('another-key')},${hashKey(KEY)}`,
        SIS_API_KEY_SERVICES: 'PushNotificationMobile',
        SIS_AUTH_REALM: 'Schools',
      },
    });
  });
  after(() => server.close());

  it('refuses a request without a key or with a wrong one: 401 with WWW-Authenticate, no database call', async () => {
    const before = calls();
    for (const headers of [
      [],
      [['X-Api-Key', 'wrong']],
      [['Authorization', basic('u', 'wrong')]],
      [['Authorization', 'Bearer x']],
    ] as [string, string][][]) {
      const res = await get(server.url, TOKEN_GET, headers);
      assert.equal(res.status, 401);
      assert.equal(res.headers.get('www-authenticate'), 'Basic realm="Schools", charset="UTF-8"');
      assert.match(res.body.toString(), /^Unauthorized/);
    }
    const soap = await rawRequest(server.url, {
      method: 'POST',
      path: '/PushNotificationMobile.asmx?WSDL',
      headers: [['Content-Type', 'text/xml']],
      body: '<x/>',
    });
    assert.equal(soap.status, 401, 'every path of the service file, WSDL included');
    assert.equal(calls(), before, 'refused requests never touch the database');
  });

  it('accepts the key in X-Api-Key or as the HTTP Basic password', async () => {
    for (const headers of [
      [['X-Api-Key', KEY]],
      [['Authorization', basic('any-user', KEY)]],
      [['Authorization', basic('', 'another-key')]],
    ] as [string, string][][]) {
      const res = await get(server.url, TOKEN_GET, headers);
      assert.equal(res.status, 200, JSON.stringify(headers));
      assert.match(res.body.toString(), /tok-1/);
    }
  });

  it('leaves service files outside SIS_API_KEY_SERVICES, and the health paths, open', async () => {
    assert.equal((await get(server.url, SCHOOL_GET)).status, 200);
    assert.equal((await get(server.url, '/healthz')).status, 200);
    assert.equal((await get(server.url, '/metrics')).status, 200);
  });

  it('counts refusals in the metrics under their service', async () => {
    const text = (await get(server.url, '/metrics')).body.toString();
    assert.match(
      text,
      /^sis_requests_total\{service="PushNotificationMobile",operation="",binding="",status="401"\} 5$/m,
    );
  });

  it('reads a key from the headers as clients send it', () => {
    const h = (m: Record<string, string>) => (n: string) => m[n];
    assert.equal(presentedKey(h({ 'x-api-key': ' k ' })), 'k');
    assert.equal(presentedKey(h({ authorization: basic('u', 'p:with:colons') })), 'p:with:colons');
    assert.equal(presentedKey(h({ authorization: 'Basic !!!' })), undefined);
    assert.equal(presentedKey(h({})), undefined);
  });
});

describe('client address allow-list', () => {
  it('answers 403 outside the list, for the chosen service files only, before any database call', async () => {
    const counting = await countingStore();
    const server = await startTestServer({
      store: counting.store,
      dataset,
      env: { SIS_ALLOW_FROM: '10.0.0.0/8, 2001:db8::/32', SIS_ALLOW_FROM_SERVICES: 'PushNotificationMobile' },
    });
    try {
      const res = await get(server.url, TOKEN_GET);
      assert.equal(res.status, 403);
      assert.equal(counting.calls(), 0);
      assert.equal((await get(server.url, SCHOOL_GET)).status, 200, 'another service file is open');
    } finally {
      await server.close();
    }
  });

  it('lets listed addresses in, IPv4 and IPv6, and believes X-Forwarded-For only from a trusted proxy', async () => {
    const server = await startTestServer({
      dataset,
      env: { SIS_ALLOW_FROM: '127.0.0.0/8,::1', SIS_TRUSTED_PROXIES: '127.0.0.1' },
    });
    try {
      assert.equal((await get(server.url, TOKEN_GET)).status, 200, '127.0.0.1 is in 127.0.0.0/8');
      assert.equal(
        (await get(server.url, TOKEN_GET, [['X-Forwarded-For', '198.51.100.7']])).status,
        403,
        'the client behind the proxy is not listed',
      );
      assert.equal(
        (await get(server.url, TOKEN_GET, [['X-Forwarded-For', '198.51.100.7, ::1']])).status,
        200,
        'the nearest hop is ::1',
      );
      assert.equal(
        (await get(server.url, '/Nope.asmx', [['X-Forwarded-For', '198.51.100.7']])).status,
        403,
        'all paths when no service file is named',
      );
    } finally {
      await server.close();
    }
    // Proxies named by a block (a container network's): the same.
    const block = await startTestServer({
      dataset,
      env: { SIS_ALLOW_FROM: '127.0.0.0/8,::1', SIS_TRUSTED_PROXIES: '10.0.0.0/8,127.0.0.0/8' },
    });
    try {
      assert.equal((await get(block.url, TOKEN_GET, [['X-Forwarded-For', '198.51.100.7']])).status, 403);
      assert.equal((await get(block.url, TOKEN_GET, [['X-Forwarded-For', '198.51.100.7, ::1']])).status, 200);
    } finally {
      await block.close();
    }
    const untrusted = await startTestServer({ dataset, env: { SIS_ALLOW_FROM: '198.51.100.0/24' } });
    try {
      assert.equal(
        (await get(untrusted.url, TOKEN_GET, [['X-Forwarded-For', '198.51.100.7']])).status,
        403,
        'a forged header from a client is ignored',
      );
    } finally {
      await untrusted.close();
    }
  });
});

describe('rate limit (in memory)', () => {
  it('answers 429 with Retry-After past N requests per window and client, then lets the client in again', async () => {
    const counting = await countingStore();
    const server = await startTestServer({
      store: counting.store,
      dataset,
      env: { SIS_RATE_LIMIT: '3/700ms', SIS_TRUSTED_PROXIES: '127.0.0.1' },
    });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) statuses.push((await get(server.url, TOKEN_GET)).status);
      assert.deepEqual(statuses, [200, 200, 200, 429, 429]);
      const refused = await get(server.url, TOKEN_GET);
      assert.equal(refused.headers.get('retry-after'), '1');
      assert.equal(counting.calls(), 3, 'refused requests do not reach the store');
      assert.equal(
        (await get(server.url, TOKEN_GET, [['X-Forwarded-For', '203.0.113.9']])).status,
        200,
        'another client has its own count',
      );
      assert.equal((await get(server.url, '/healthz')).status, 200, 'health checks are not limited');
      await new Promise((r) => setTimeout(r, 750));
      assert.equal((await get(server.url, TOKEN_GET)).status, 200, 'a new window');
    } finally {
      await server.close();
    }
  });
});

const redisUrl = process.env['SIS_TEST_REDIS_URL'];

describe(
  'rate limit shared in Redis',
  {
    skip:
      redisUrl === undefined ? 'set SIS_TEST_REDIS_URL (e.g. redis://127.0.0.1:6379) to run the Redis tests' : false,
  },
  () => {
    it('two instances share one count per client', async () => {
      // A rule of its own per run, so counts of earlier runs do not interfere.
      const limit = `${4 + (Date.now() % 1000)}`;
      const env = { SIS_RATE_LIMIT: `${limit}/5s`, SIS_REDIS_URL: redisUrl!, SIS_TRUSTED_PROXIES: '127.0.0.1' };
      const a = await startTestServer({ dataset, env });
      const b = await startTestServer({ dataset, env });
      try {
        const client: [string, string][] = [['X-Forwarded-For', `203.0.113.${Date.now() % 250}`]];
        const statuses: number[] = [];
        for (let i = 0; i < Number(limit) + 2; i++)
          statuses.push((await get(i % 2 === 0 ? a.url : b.url, TOKEN_GET, client)).status);
        assert.deepEqual(statuses, [...Array<number>(Number(limit)).fill(200), 429, 429]);
        const refused = await get(a.url, TOKEN_GET, client);
        assert.ok(Number(refused.headers.get('retry-after')) >= 1 && Number(refused.headers.get('retry-after')) <= 5);
      } finally {
        await a.close();
        await b.close();
      }
    });

    it('lets requests through when Redis cannot be reached', async () => {
      const server = await startTestServer({
        dataset,
        env: { SIS_RATE_LIMIT: '1/1m', SIS_REDIS_URL: 'redis://127.0.0.1:1' },
      });
      try {
        for (let i = 0; i < 3; i++) assert.equal((await get(server.url, TOKEN_GET)).status, 200);
      } finally {
        await server.close();
      }
    });
  },
);
