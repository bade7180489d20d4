/**
 * What a client is, for NAT64 and for trusted lists (issue 46 point 5; docs/security.md, "What a
 * client is"): RFC 6052 §2.2's layouts read for each configured prefix length (RFC 6052 §2.4's
 * own examples), the local-use prefix never collapsed into one client when its layout is not
 * configured, and a trusted IPv4 network believed through another embedding only where
 * SIS_SMS_TRUSTED_EMBEDDED names it (over HTTP: test/access/nat64-layouts.test.ts,
 * test/sms/sms-addresses.test.ts); and how SIS_RATE_LIMIT_IPV6_48 is read (issue 46 point 3).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  clientKey,
  embeddedIpv4,
  inNetworkList,
  nat64Prefix,
  networkList,
  siteNetwork,
} from '../../src/address/client-network.js';
import type { Nat64Prefix } from '../../src/address/client-network.js';
import { ConfigError, loadConfig } from '../../src/config/config.js';

const prefix = (entry: string): Nat64Prefix => {
  const read = nat64Prefix(entry);
  assert.ok('value' in read, entry);
  return read.value;
};

/** RFC 6052 §2.4: 192.0.2.33 under each prefix length. */
const RFC_6052_EXAMPLES: readonly (readonly [string, string])[] = [
  ['2001:db8::/32', '2001:db8:c000:221::'],
  ['2001:db8:100::/40', '2001:db8:1c0:2:21::'],
  ['2001:db8:122::/48', '2001:db8:122:c000:2:2100::'],
  ['2001:db8:122:300::/56', '2001:db8:122:3c0:0:221::'],
  ['2001:db8:122:344::/64', '2001:db8:122:344:c0:2:2100:0'],
  ['2001:db8:122:344::/96', '2001:db8:122:344::192.0.2.33'],
];

/** Two IPv4 clients (198.51.100.9, 203.0.113.7) behind the local-use prefix in each layout. */
const LOCAL_USE: readonly { readonly prefix: string; readonly addresses: readonly [string, string] }[] = [
  { prefix: '64:ff9b:1::/48', addresses: ['64:ff9b:1:c633:64:900::', '64:ff9b:1:cb00:71:700::'] },
  { prefix: '64:ff9b:1:ab00::/56', addresses: ['64:ff9b:1:abc6:33:6409::', '64:ff9b:1:abcb:0:7107::'] },
  { prefix: '64:ff9b:1:ab::/64', addresses: ['64:ff9b:1:ab:c6:3364:900:0', '64:ff9b:1:ab:cb:71:700:0'] },
  { prefix: '64:ff9b:1::/96', addresses: ['64:ff9b:1::c633:6409', '64:ff9b:1::cb00:7107'] },
];

describe('NAT64 prefixes (RFC 6052 layouts)', () => {
  it('reads the IPv4 address where each prefix length puts it (RFC 6052 §2.4)', () => {
    for (const [entry, address] of RFC_6052_EXAMPLES) {
      const nat64 = [prefix(entry)];
      assert.equal(embeddedIpv4(address, nat64), '192.0.2.33', `${address} under ${entry}`);
      assert.equal(clientKey(address, 64, nat64), '192.0.2.33', `${address} under ${entry}`);
      assert.equal(siteNetwork(address, nat64), null, `${address}: an IPv4 client has no /48`);
    }
  });

  it('counts each client of a configured local-use layout as its IPv4 address, not 0.0.0.0 for all', () => {
    for (const { prefix: entry, addresses } of LOCAL_USE) {
      const nat64 = [prefix(entry)];
      assert.deepEqual(
        addresses.map((a) => clientKey(a, 64, nat64)),
        ['198.51.100.9', '203.0.113.7'],
        entry,
      );
    }
    // The u octet (bits 64 to 71) and the suffix are not part of the address.
    assert.equal(clientKey('64:ff9b:1:c633:ff64:900:1:2', 64, [prefix('64:ff9b:1::/48')]), '198.51.100.9');
  });

  it('a local-use address under no configured prefix is its own client, never one bucket for all', () => {
    for (const { addresses } of LOCAL_USE) {
      const keys = addresses.map((a) => clientKey(a, 64));
      assert.notEqual(keys[0], keys[1], `${addresses.join(', ')} (layout not configured)`);
      for (const a of addresses) {
        assert.equal(embeddedIpv4(a), null, a);
        assert.equal(siteNetwork(a), null, `${a}: not a /48 shared by everyone behind the translator`);
      }
    }
    // One client, one key however written.
    assert.equal(clientKey('64:ff9b:1:C633:0064:0900:0:0', 64), clientKey('64:ff9b:1:c633:64:900::', 64));
    // Another configured prefix does not change that.
    assert.equal(clientKey('64:ff9b:1::c633:6409', 64, [prefix('2001:db8:64::/96')]), '64:ff9b:1:0:0:0:c633:6409');
  });

  it('reads the well-known prefix as a /96 always, and other IPv6 addresses by their prefix', () => {
    const nat64 = [prefix('64:ff9b:1::/48')];
    assert.equal(clientKey('64:ff9b::c633:6409', 64, nat64), '198.51.100.9');
    assert.equal(clientKey('64:ff9b::c633:6409', 64), '198.51.100.9');
    assert.equal(clientKey('2001:db8:5:77::1', 64, nat64), '2001:db8:5:77::/64');
    assert.equal(siteNetwork('2001:db8:5:77::1', nat64), '2001:db8:5::/48');
  });

  it('refuses prefixes RFC 6052 has no layout for, with host bits, or in the well-known prefix', () => {
    for (const [entry, expected] of [
      ['64:ff9b:1::/44', /RFC 6052/],
      ['64:ff9b:1::', /expected an IPv6 prefix/],
      ['198.51.100.0/24', /expected an IPv6 prefix/],
      ['64:ff9b:1::1/48', /bits set past \/48/],
      ['64:ff9b::/48', /well-known/],
    ] as const)
      assert.match((nat64Prefix(entry) as { problem: string }).problem, expected, entry);
    assert.ok('value' in nat64Prefix('64:ff9b::/96'));
    assert.throws(
      () => loadConfig({ SIS_CLIENT_NAT64_PREFIXES: '64:ff9b:1::/48,64:ff9b:1::/40' }),
      (e: unknown) => e instanceof ConfigError && /SIS_CLIENT_NAT64_PREFIXES/.test(e.message),
    );
    const config = loadConfig({ SIS_CLIENT_NAT64_PREFIXES: '64:ff9b:1::/48, 2001:db8:122:344::/64' });
    assert.deepEqual(
      config.clientNat64Prefixes.map((p) => p.length),
      [48, 64],
    );
    assert.equal(config.sms.velocity.nat64Prefixes, config.clientNat64Prefixes, 'AuthCode counts the same clients');
  });
});

describe('trusted addresses believe only the forms the operator lists', () => {
  const trusted = networkList(['198.51.100.0/24'])!;
  /** The trusted 198.51.100.9 in each embedding but IPv4-mapped. */
  const EMBEDDED = [
    ['translated', '::ffff:0:c633:6409'],
    ['compatible', '::c633:6409'],
    ['6to4', '2002:c633:6409::1'],
    ['nat64', '64:ff9b::c633:6409'],
    ['teredo', '2001:0:4136:e378:8000:63bf:39cc:9bf6'],
  ] as const;

  it('an IPv4-mapped address always; the other embeddings not by default', () => {
    assert.ok(inNetworkList(trusted, '::ffff:198.51.100.9'));
    assert.ok(inNetworkList(trusted, '0:0:0:0:0:FFFF:c633:6409'));
    for (const [kind, address] of EMBEDDED) assert.ok(!inNetworkList(trusted, address), `${kind} ${address}`);
    assert.deepEqual([...loadConfig({}).sms.trustedEmbedded], []);
  });

  it('each embedding only where SIS_SMS_TRUSTED_EMBEDDED names it', () => {
    for (const [kind] of EMBEDDED) {
      const config = loadConfig({ SIS_SMS_TRUSTED_EMBEDDED: kind });
      const trust = { embedded: config.sms.trustedEmbedded, nat64: config.clientNat64Prefixes };
      for (const [other, address] of EMBEDDED)
        assert.equal(inNetworkList(trusted, address, trust), other === kind, `${other} ${address} with ${kind}`);
    }
    // The embedding of an IPv4 address that is not trusted stays untrusted.
    const all = loadConfig({ SIS_SMS_TRUSTED_EMBEDDED: 'translated,compatible,6to4,nat64,teredo,mapped' });
    assert.ok(!inNetworkList(trusted, '2002:cb00:7107::1', { embedded: all.sms.trustedEmbedded, nat64: [] }));
    // A local-use NAT64 address is read as the operator configured it, and only then.
    const local = { embedded: new Set(['nat64'] as const), nat64: [prefix('64:ff9b:1::/48')] };
    assert.ok(inNetworkList(trusted, '64:ff9b:1:c633:64:900::', local));
    assert.ok(!inNetworkList(trusted, '64:ff9b:1:c633:64:900::', { ...local, nat64: [] }));
    assert.throws(
      () => loadConfig({ SIS_SMS_TRUSTED_EMBEDDED: '6to4,isatap' }),
      (e: unknown) =>
        e instanceof ConfigError && /SIS_SMS_TRUSTED_EMBEDDED="6to4,isatap": unknown isatap/.test(e.message),
    );
  });
});

describe('the rate limit’s /48 allowance (SIS_RATE_LIMIT_IPV6_48)', () => {
  it('is 16 times the client’s count by default, a count when one is given, and off at 0 or a /48 prefix', () => {
    const site = (env: Record<string, string>): number | null => loadConfig(env).rateLimitIpv6Site;
    assert.equal(site({ SIS_RATE_LIMIT: '3/1h' }), 48);
    assert.equal(site({ SIS_RATE_LIMIT: '100/1s', SIS_RATE_LIMIT_IPV6_48: '4x' }), 400);
    assert.equal(site({ SIS_RATE_LIMIT: '100/1s', SIS_RATE_LIMIT_IPV6_48: '250' }), 250);
    assert.equal(site({ SIS_RATE_LIMIT: '100/1s', SIS_RATE_LIMIT_IPV6_48: '0' }), null);
    assert.equal(site({ SIS_RATE_LIMIT: '100/1s', SIS_CLIENT_IPV6_PREFIX: '48' }), null, 'the client is its /48');
    assert.equal(site({}), null, 'no rate limit');
    assert.throws(
      () => site({ SIS_RATE_LIMIT: '100/1s', SIS_RATE_LIMIT_IPV6_48: '50' }),
      (e: unknown) => e instanceof ConfigError && /SIS_RATE_LIMIT_IPV6_48=50: expected at least/.test(e.message),
    );
    assert.throws(
      () => site({ SIS_RATE_LIMIT: '100/1s', SIS_RATE_LIMIT_IPV6_48: 'lots' }),
      (e: unknown) => e instanceof ConfigError && /SIS_RATE_LIMIT_IPV6_48="lots": expected Nx/.test(e.message),
    );
  });
});
