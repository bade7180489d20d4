/**
 * One notion of a client (docs/security.md, "What a client is"; issue 41 point 1) with the
 * addresses as the connections' own: in a network namespace of its own (test/helpers/
 * network-namespace.ts), each embedding of an IPv4 address connects from an address of its own
 * after two connections from that IPv4 address (shown as `::ffff:a.b.c.d` on the service's `::`
 * listener), and is one client with it to the rate limit, the access log and AuthCode's address
 * limit; eight addresses of one IPv6 /64 are one client, the next /64 another. Skipped, saying
 * why, without root or iproute2.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { NAMESPACE_SKIP, inNamespace } from '../helpers/network-namespace.js';
import { freshCode, saudiMobiles, SMS_DEFAULTS } from '../helpers/sms-calls.js';

const TOKEN_GET = '/PushNotificationMobile.asmx/GetTokenDevice?id=1';

/** Each embedding with an IPv4 client of its own, as a socket shows it (sockets spell addresses one way). */
const EMBEDDED: readonly { readonly kind: string; readonly ipv4: string; readonly address: string }[] = [
  { kind: 'IPv4-translated', ipv4: '198.51.100.2', address: '::ffff:0:c633:6402' },
  { kind: 'IPv4-compatible', ipv4: '198.51.100.3', address: '::c633:6403' },
  { kind: '6to4', ipv4: '198.51.100.4', address: '2002:c633:6404::1' },
  { kind: 'NAT64 well-known', ipv4: '198.51.100.5', address: '64:ff9b::c633:6405' },
  // In the /96 layout (RFC 6052) NAT64 below configures.
  { kind: 'NAT64 local-use', ipv4: '198.51.100.6', address: '64:ff9b:1::c633:6406' },
  { kind: 'Teredo', ipv4: '198.51.100.7', address: '2001:0:4136:e378:8000:63bf:39cc:9bf8' },
];
const NAT64 = { SIS_CLIENT_NAT64_PREFIXES: '64:ff9b:1::/96' };
const ONE_64 = Array.from({ length: 8 }, (_, i) => `2001:db8:1:2::${(i + 1).toString(16)}`);
const NEXT_64 = '2001:db8:1:3::1';

/** On the namespace's loopback. */
const ADDRESSES = [...EMBEDDED.flatMap((e) => [e.ipv4, e.address]), ...ONE_64, NEXT_64];
/** Each request's source: the IPv4 client twice (IPv4-mapped), its embedding twice; the /64's eight, the next /64. */
const SOURCES = [...EMBEDDED.flatMap((e) => [e.ipv4, e.ipv4, e.address, e.address]), ...ONE_64, NEXT_64];
const COUNTED = [
  ...EMBEDDED.flatMap((e) => Array<string>(4).fill(e.ipv4)),
  ...ONE_64.map(() => '2001:db8:1:2::/64'),
  '2001:db8:1:3::/64',
];
/** With a limit of three: the embedding's second connection is the client's fourth. */
const ALLOWED = [...EMBEDDED.flatMap(() => [true, true, true, false]), ...ONE_64.map((_, i) => i < 3), true];

describe('one client however it connects', { skip: NAMESPACE_SKIP, timeout: 180_000 }, () => {
  it('the rate limit and the access log count each client once', async () => {
    const seen = await inNamespace(ADDRESSES, {
      env: { SIS_RATE_LIMIT: '3/1h', ...NAT64 },
      dataset: { devices: [{ id: '1', token: 'tok-1' }] },
      requests: SOURCES.map((from) => ({ from, path: TOKEN_GET })),
    });
    for (const [i, from] of SOURCES.entries())
      assert.equal(seen.statuses[i], ALLOWED[i] ? 200 : 429, `from ${from} (counted as ${COUNTED[i]})`);
    assert.deepEqual(seen.clients, COUNTED, 'the access log names the client each request was counted as');
  });

  it('AuthCode counts each client once', async () => {
    const mobiles = saudiMobiles(SOURCES.length, 43, '+96650123');
    const seen = await inNamespace(ADDRESSES, {
      env: { ...SMS_DEFAULTS, ...NAT64, SIS_TRUSTED_PROXIES: '', SIS_AUTH_CODES_PER_ADDRESS_HOUR: '3' },
      requests: SOURCES.map((from, i) => ({
        from,
        path: `/AuthCodeSending.asmx/AuthCode?code=${freshCode()}&phone=0${mobiles[i]!}`,
      })),
    });
    for (const [i, from] of SOURCES.entries())
      assert.equal(seen.statuses[i], ALLOWED[i] ? 200 : 500, `from ${from} (counted as ${COUNTED[i]})`);
  });
});
