/**
 * The rate limit counts a native IPv6 client's /48 too (issue 46 point 3; docs/security.md, "What
 * a client is"): one /48, what a tunnel broker gives anyone, is not 65,536 quotas. Over real HTTP,
 * through X-Forwarded-For from a trusted proxy (in memory and in Redis) and from the connections'
 * own addresses in a network namespace of their own (where root): 64 /64s of one /48 at
 * SIS_RATE_LIMIT=3/… get the /48's allowance (16 × 3 by default) and no more, the next /48 its
 * own; and a /64 over its own limit does not use up its neighbours' share.
 */
import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import { describe, it } from 'node:test';
import { NAMESPACE_SKIP, inNamespace } from '../helpers/network-namespace.js';
import { rawRequest } from '../helpers/raw-http.js';
import type { RawResponse } from '../helpers/raw-http.js';
import { REDIS_URL } from '../helpers/sms-calls.js';
import { startTestServer } from '../helpers/test-server.js';

const TOKEN_GET = '/PushNotificationMobile.asmx/GetTokenDevice?id=1';
const dataset = { devices: [{ id: '1', token: 'tok-1' }] };

/** A /48 of its own per run (Redis keeps counts across runs), and an address in each of its first 64 /64s. */
function oneSite(): { site: string; addresses: string[] } {
  const site = `2001:db8:${randomInt(0x10000).toString(16)}`;
  return {
    site,
    addresses: Array.from({ length: 64 }, (_, i) => `${site}:${i.toString(16)}::${randomInt(1, 0xffff).toString(16)}`),
  };
}

/** The /48 of a different 32-bit prefix: counted apart from oneSite's. */
const OTHER_SITE = `2001:db9:${randomInt(0x10000).toString(16)}:1::1`;

const limiters: readonly { name: string; env: Record<string, string>; skip: string | false }[] = [
  { name: 'in memory', env: {}, skip: false },
  {
    name: 'in Redis',
    env: { SIS_REDIS_URL: REDIS_URL },
    skip: REDIS_URL === '' ? 'set SIS_TEST_REDIS_URL (e.g. redis://127.0.0.1:6379) to run the Redis tests' : false,
  },
];

async function from(url: string, address: string): Promise<RawResponse> {
  return rawRequest(url, { method: 'GET', path: TOKEN_GET, headers: [['X-Forwarded-For', address]] });
}

describe('the rate limit counts an IPv6 /48 beside each client', { timeout: 180_000 }, () => {
  for (const limiter of limiters) {
    it(`64 /64s of one /48 get its allowance, no more (${limiter.name})`, { skip: limiter.skip }, async () => {
      const { addresses } = oneSite();
      // A window of its own per run (about an hour): Redis counts of earlier runs do not interfere.
      const window = `${3_600_000 + randomInt(1_000_000)}ms`;
      const server = await startTestServer({
        dataset,
        env: { SIS_RATE_LIMIT: `3/${window}`, SIS_TRUSTED_PROXIES: '127.0.0.1', ...limiter.env },
      });
      try {
        const answers: RawResponse[] = [];
        for (const address of addresses) answers.push(await from(server.url, address));
        const statuses = answers.map((a) => a.status);
        assert.equal(statuses.filter((s) => s === 200).length, 48, 'the /48 gets 16 × 3 (SIS_RATE_LIMIT_IPV6_48=16x)');
        assert.deepEqual(statuses, [...Array<number>(48).fill(200), ...Array<number>(16).fill(429)]);
        assert.match(answers[63]!.headers.get('retry-after') ?? '', /^\d+$/, 'refused with Retry-After');
        assert.equal((await from(server.url, OTHER_SITE)).status, 200, 'another /48 has its own allowance');
      } finally {
        await server.close();
      }
    });

    it(
      `a /64 over its own limit does not use up its /48's allowance (${limiter.name})`,
      { skip: limiter.skip },
      async () => {
        const { addresses } = oneSite();
        const [greedy, second, third] = addresses as [string, string, string];
        const window = `${3_600_000 + randomInt(1_000_000)}ms`;
        const server = await startTestServer({
          dataset,
          env: {
            SIS_RATE_LIMIT: `3/${window}`,
            SIS_RATE_LIMIT_IPV6_48: '6',
            SIS_TRUSTED_PROXIES: '127.0.0.1',
            ...limiter.env,
          },
        });
        try {
          const statuses: number[] = [];
          for (const address of [...Array<string>(10).fill(greedy), second, second, second, third])
            statuses.push((await from(server.url, address)).status);
          assert.deepEqual(
            statuses,
            [200, 200, 200, 429, 429, 429, 429, 429, 429, 429, 200, 200, 200, 429],
            'the greedy /64 gets its 3 and counts 3 against the /48; its neighbour the other 3; the /48 (6) is then full',
          );
        } finally {
          await server.close();
        }
      },
    );
  }

  it('from the connections’ own addresses (a network namespace)', { skip: NAMESPACE_SKIP }, async () => {
    const { addresses } = oneSite();
    const seen = await inNamespace([...addresses, OTHER_SITE], {
      env: { SIS_RATE_LIMIT: '3/1h' },
      dataset,
      requests: [...addresses, OTHER_SITE].map((address) => ({ from: address, path: TOKEN_GET })),
    });
    assert.deepEqual(seen.statuses, [...Array<number>(48).fill(200), ...Array<number>(16).fill(429), 200]);
    assert.equal(new Set(seen.clients.slice(0, 64)).size, 64, 'each /64 is a client of its own (the access log)');
  });
});
