/**
 * Clients behind a local-use NAT64 translator (`64:ff9b:1::/48`, RFC 8215) over real HTTP (issue
 * 46 point 5; docs/security.md, "What a client is"): with the translator's prefix configured
 * (SIS_CLIENT_NAT64_PREFIXES) each of RFC 6052's layouts is read where it puts the IPv4 address,
 * so two clients are two clients and one is the same client as its IPv4 address; with it not
 * configured, its clients are still not one bucket. Through X-Forwarded-For from a trusted proxy
 * and from the connections' own addresses in a network namespace (where root). The rate limit
 * and the access log's `client`; AuthCode counts by the same key (test/unit/client-network.test.ts).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { logCollector } from '../helpers/log-collector.js';
import { NAMESPACE_SKIP, inNamespace } from '../helpers/network-namespace.js';
import { rawRequest } from '../helpers/raw-http.js';
import { startTestServer } from '../helpers/test-server.js';

const TOKEN_GET = '/PushNotificationMobile.asmx/GetTokenDevice?id=1';
const dataset = { devices: [{ id: '1', token: 'tok-1' }] };

/** 198.51.100.9 and 203.0.113.7 behind a translator in each layout. */
const LAYOUTS = [
  { prefix: '64:ff9b:1::/48', clients: ['64:ff9b:1:c633:64:900::', '64:ff9b:1:cb00:71:700::'] },
  { prefix: '64:ff9b:1:ab::/64', clients: ['64:ff9b:1:ab:c6:3364:900:0', '64:ff9b:1:ab:cb:71:700:0'] },
] as const;

/** Each address's status and access-log client, one request each in order, at SIS_RATE_LIMIT=1/1h. */
async function forwarded(
  env: Record<string, string>,
  addresses: readonly string[],
): Promise<{ statuses: number[]; clients: unknown[] }> {
  const log = logCollector();
  const server = await startTestServer({
    dataset,
    env: { SIS_RATE_LIMIT: '1/1h', SIS_TRUSTED_PROXIES: '127.0.0.1', LOG_LEVEL: 'info', ...env },
    logDestination: log.stream,
  });
  const statuses: number[] = [];
  try {
    for (const address of addresses)
      statuses.push(
        (await rawRequest(server.url, { method: 'GET', path: TOKEN_GET, headers: [['X-Forwarded-For', address]] }))
          .status,
      );
  } finally {
    await server.close();
  }
  return { statuses, clients: log.lines.filter((l) => l['msg'] === 'request').map((l) => l['client']) };
}

describe('clients behind a local-use NAT64 prefix', { timeout: 120_000 }, () => {
  for (const { prefix, clients } of LAYOUTS)
    it(`the ${prefix.split('/')[1]} layout configured: two clients are two, one is its IPv4 address`, async () => {
      const seen = await forwarded({ SIS_CLIENT_NAT64_PREFIXES: prefix }, [...clients, '198.51.100.9']);
      assert.deepEqual(seen.statuses, [200, 200, 429], 'one each; 198.51.100.9 had its one through the translator');
      assert.deepEqual(seen.clients, ['198.51.100.9', '203.0.113.7', '198.51.100.9']);
    });

  it('a layout not configured: each address is a client of its own, not one bucket for the translator', async () => {
    const [first, second] = LAYOUTS[0].clients;
    const seen = await forwarded({}, [first, second, first]);
    assert.deepEqual(seen.statuses, [200, 200, 429]);
    assert.deepEqual(seen.clients, [
      '64:ff9b:1:c633:64:900:0:0',
      '64:ff9b:1:cb00:71:700:0:0',
      '64:ff9b:1:c633:64:900:0:0',
    ]);
  });

  it('from the connections’ own addresses (a network namespace)', { skip: NAMESPACE_SKIP }, async () => {
    const { prefix, clients } = LAYOUTS[0];
    const sources = [...clients, '198.51.100.9'];
    const seen = await inNamespace(sources, {
      env: { SIS_RATE_LIMIT: '1/1h', SIS_CLIENT_NAT64_PREFIXES: prefix },
      dataset,
      requests: sources.map((address) => ({ from: address, path: TOKEN_GET })),
    });
    assert.deepEqual(seen.statuses, [200, 200, 429]);
    assert.deepEqual(seen.clients, ['198.51.100.9', '203.0.113.7', '198.51.100.9']);
  });
});
