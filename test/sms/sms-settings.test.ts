/**
 * The settings of issue 28 read as documented, and a wrong value stops the start with its name and
 * what is expected; IPv6 addresses counted by their prefix whichever way they are written, and
 * those carrying an IPv4 address (IPv4-mapped, -translated, -compatible, 6to4, NAT64, Teredo) by
 * that address (issue 33 point 6, issue 41 point 1).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { clientKey, inNetworkList, networkList, siteNetwork, unmapped } from '../../src/address/client-network.js';
import { ConfigError, loadConfig } from '../../src/config/config.js';

describe('AuthCode for parents: settings', () => {
  it('reads the defaults, trusted networks, test numbers, the prefix and the guard modes', () => {
    const defaults = loadConfig({});
    assert.equal(defaults.sms.velocity.perAddressHour, 1000);
    assert.equal(defaults.sms.velocity.ipv6Prefix, 64);
    assert.equal(defaults.sms.repeatMs, 300_000);
    assert.deepEqual([...defaults.sms.monitored], []);
    const set = loadConfig({
      SIS_SMS_IPV6_PREFIX: '56',
      SIS_SMS_TRUSTED_ADDRESSES: '10.0.0.0/8, 192.0.2.7, 2001:db8::/48',
      SIS_SMS_TEST_NUMBERS: '+966 50 000 0001,+1-555-0100',
      SIS_SMS_GUARD: 'monitor,budget=enforce',
      SIS_AUTH_CODE_REPEAT_MS: '0',
    });
    assert.equal(set.sms.velocity.ipv6Prefix, 56, 'the old name still read');
    assert.equal(set.clientIpv6Prefix, 56, 'one prefix for every counter');
    const renamed = loadConfig({ SIS_CLIENT_IPV6_PREFIX: '/48' });
    assert.deepEqual(
      [renamed.clientIpv6Prefix, renamed.sms.velocity.ipv6Prefix, defaults.clientIpv6Prefix],
      [48, 48, 64],
    );
    assert.equal(loadConfig({ SIS_CLIENT_IPV6_PREFIX: '56', SIS_SMS_IPV6_PREFIX: '56' }).clientIpv6Prefix, 56);
    assert.deepEqual(set.sms.trustedAddresses, ['10.0.0.0/8', '192.0.2.7', '2001:db8::/48']);
    assert.deepEqual([...set.sms.testNumbers], ['+966500000001', '+15550100']);
    assert.ok(set.sms.monitored.has('range') && set.sms.monitored.has('phone-hourly'));
    assert.ok(!set.sms.monitored.has('budget-daily'));
    assert.equal(set.sms.repeatMs, 0);
    assert.deepEqual([...loadConfig({ SIS_SMS_GUARD: 'enforce,address=monitor' }).sms.monitored], ['address']);
    // A bare monitor leaves the operator's brakes enforced; each watches only when named.
    const bare = loadConfig({ SIS_SMS_GUARD: 'monitor' }).sms.monitored;
    assert.deepEqual([...bare].sort(), ['address', 'country-daily', 'phone-backoff', 'phone-hourly', 'range']);
    const named = loadConfig({ SIS_SMS_GUARD: 'monitor,budget=monitor,number=monitor' }).sms.monitored;
    assert.ok(named.has('budget-daily') && named.has('number-type') && !named.has('blocked-range'));
  });

  it('refuses wrong values, naming the setting and what is expected', () => {
    const problems = (env: Record<string, string>): string => {
      try {
        loadConfig(env);
      } catch (err) {
        assert.ok(err instanceof ConfigError);
        return err.message;
      }
      assert.fail('accepted');
    };
    assert.match(problems({ SIS_SMS_IPV6_PREFIX: '60' }), /SIS_SMS_IPV6_PREFIX="60": expected one of 64, 56, 48/);
    assert.match(problems({ SIS_CLIENT_IPV6_PREFIX: '/60' }), /SIS_CLIENT_IPV6_PREFIX="\/60": expected one of 64, 56/);
    assert.match(
      problems({ SIS_CLIENT_IPV6_PREFIX: '56', SIS_SMS_IPV6_PREFIX: '48' }),
      /SIS_SMS_IPV6_PREFIX: the old name of SIS_CLIENT_IPV6_PREFIX, set to 48 while that says 56; set only SIS_CLIENT_IPV6_PREFIX/,
    );
    assert.match(problems({ SIS_SMS_TRUSTED_ADDRESSES: '10.0.0.0/33' }), /SIS_SMS_TRUSTED_ADDRESSES=.*prefix length/);
    assert.match(problems({ SIS_SMS_TRUSTED_ADDRESSES: 'school.example' }), /not an IPv4 or IPv6 address/);
    assert.match(problems({ SIS_SMS_TEST_NUMBERS: '12' }), /SIS_SMS_TEST_NUMBERS=.*country code/);
    assert.match(
      problems({ SIS_SMS_GUARD: 'enforce,adress=monitor' }),
      /SIS_SMS_GUARD=.*layers: number, blocked-range/,
    );
    assert.match(problems({ SIS_AUTH_CODE_REPEAT_MS: '7200000' }), /SIS_AUTH_CODE_REPEAT_MS/);
    assert.match(problems({ SIS_SMS_RECEIPT_PATH: '/r' }), /SIS_SMS_RECEIPT_PATH: set, but SIS_SMS_WEBHOOK_URL is not/);
    const hook = { SIS_SMS_WEBHOOK_URL: 'https://sms.example/hook', SIS_SMS_WEBHOOK_SECRET: 's'.repeat(32) };
    assert.match(problems({ ...hook, SIS_SMS_RECEIPT_PATH: '/metrics' }), /a path of its own/);
    assert.match(problems({ ...hook, SIS_SMS_RECEIPT_PATH: 'receipts' }), /expected a path such as/);
    assert.equal(
      loadConfig({ ...hook, SIS_SMS_RECEIPT_PATH: '/sms/receipts' }).smsWebhook?.receiptPath,
      '/sms/receipts',
    );
  });

  it('counts an IPv6 address by its /64, /56 or /48, however it is written', () => {
    for (const written of [
      '2001:db8:1:2::7',
      '2001:0db8:0001:0002:ffff:0:0:1',
      '2001:db8:1:2:0:0:1.2.3.4',
      '2001:db8:1:2::1%eth0',
    ])
      assert.equal(clientKey(written, 64), '2001:db8:1:2::/64', written);
    assert.equal(clientKey('2001:db8:1:2ff::1', 56), '2001:db8:1:200::/56');
    assert.equal(clientKey('2001:db8:1:2ff::1', 48), '2001:db8:1::/48');
    assert.equal(clientKey('::1', 64), '0:0:0:0::/64');
    assert.equal(clientKey('203.0.113.9', 64), '203.0.113.9', 'IPv4 as it is');
  });

  it('counts an IPv6 address carrying an IPv4 one (mapped, translated, compatible, 6to4, NAT64, Teredo) by that IPv4 address, in any spelling', () => {
    for (const written of [
      '::ffff:198.51.100.9',
      '::FFFF:198.51.100.9',
      '::ffff:c633:6409',
      '0:0:0:0:0:ffff:c633:6409',
      '0000:0000:0000:0000:0000:FFFF:C633:6409',
      '0:0:0:0:0:ffff:198.51.100.9',
      '2002:c633:6409::1',
      '2002:c633:6409:abcd:1:2:3:4',
      '64:ff9b::198.51.100.9',
      '64:ff9b::c633:6409',
      '0064:ff9b:0000:0000:0000:0000:c633:6409',
      '::ffff:0:198.51.100.9',
      '::FFFF:0:C633:6409',
      '0:0:0:0:ffff:0:198.51.100.9',
      '::198.51.100.9',
      '::c633:6409',
      '2001:0:4136:e378:8000:63bf:39cc:9bf6',
      '2001::39CC:9BF6',
    ]) {
      for (const prefix of [64, 56, 48] as const) assert.equal(clientKey(written, prefix), '198.51.100.9', written);
      assert.equal(siteNetwork(written), null, `${written}: no /48 of its own`);
    }
    // Not embeddings: counted as IPv6 (`::` and `::1` are not IPv4-compatible addresses).
    assert.equal(clientKey('::1:ffff:c633:6409', 64), '0:0:0:0::/64');
    assert.equal(clientKey('::', 64), '0:0:0:0::/64');
    assert.equal(clientKey('64:ff9b:2::c633:6409', 64), '64:ff9b:2:0::/64');
    assert.equal(clientKey('2001:db8::c633:6409', 64), '2001:db8:0:0::/64', 'documentation, not Teredo');
    // Only IPv4-mapped is the same host as its IPv4 address (trust and allow-lists); others are as written.
    assert.deepEqual(
      ['::FFFF:198.51.100.9', '0:0:0:0:0:ffff:c633:6409', '::ffff:0:198.51.100.9', '::198.51.100.9'].map(unmapped),
      ['198.51.100.9', '198.51.100.9', '::ffff:0:198.51.100.9', '::198.51.100.9'],
    );
    assert.equal(siteNetwork('2001:db8:5:77::1'), '2001:db8:5::/48');
    assert.equal(siteNetwork('198.51.100.9'), null);
    // A trusted IPv4 network holds its clients however a dual-stack socket writes them (the other
    // embeddings only where SIS_SMS_TRUSTED_EMBEDDED says: test/unit/client-network.test.ts).
    const trusted = networkList(['198.51.100.0/24'])!;
    for (const written of ['198.51.100.9', '::ffff:198.51.100.9', '::FFFF:c633:6409'])
      assert.ok(inNetworkList(trusted, written), written);
    assert.ok(!inNetworkList(trusted, '2002:c633:6509::1'));
  });
});
