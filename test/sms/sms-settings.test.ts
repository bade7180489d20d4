/**
 * The settings of issue 28 read as documented, and a wrong value stops the start with its name and
 * what is expected; IPv6 addresses counted by their prefix whichever way they are written, and
 * those carrying an IPv4 address (IPv4-mapped, 6to4, NAT64) by that address (issue 33 point 6).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config/config.js';
import { countedNetwork, inNetworkList, networkList, siteNetwork } from '../../src/sms/client-network.js';

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
    assert.equal(set.sms.velocity.ipv6Prefix, 56);
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
      assert.equal(countedNetwork(written, 64), '2001:db8:1:2::/64', written);
    assert.equal(countedNetwork('2001:db8:1:2ff::1', 56), '2001:db8:1:200::/56');
    assert.equal(countedNetwork('2001:db8:1:2ff::1', 48), '2001:db8:1::/48');
    assert.equal(countedNetwork('::1', 64), '0:0:0:0::/64');
    assert.equal(countedNetwork('203.0.113.9', 64), '203.0.113.9', 'IPv4 as it is');
  });

  it('counts an IPv6 address carrying an IPv4 one (IPv4-mapped, 6to4, NAT64) by that IPv4 address, in any spelling', () => {
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
    ]) {
      for (const prefix of [64, 56, 48] as const)
        assert.equal(countedNetwork(written, prefix), '198.51.100.9', written);
      assert.equal(siteNetwork(written), null, `${written}: no /48 of its own`);
    }
    // Not translation prefixes: counted as IPv6.
    assert.equal(
      countedNetwork('64:ff9b:1::c633:6409', 64),
      '64:ff9b:1:0::/64',
      'RFC 8215 local-use: a network of its own',
    );
    assert.equal(countedNetwork('::1:ffff:c633:6409', 64), '0:0:0:0::/64');
    assert.equal(siteNetwork('2001:db8:5:77::1'), '2001:db8:5::/48');
    assert.equal(siteNetwork('198.51.100.9'), null);
    // A trusted IPv4 network holds its clients however they are written.
    const trusted = networkList(['198.51.100.0/24'])!;
    for (const written of ['198.51.100.9', '::ffff:198.51.100.9', '2002:c633:6409::1', '64:ff9b::c633:6409'])
      assert.ok(inNetworkList(trusted, written), written);
    assert.ok(!inNetworkList(trusted, '2002:c633:6509::1'));
  });
});
