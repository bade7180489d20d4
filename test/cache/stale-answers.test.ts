/**
 * Stale answers' own rules (bindings/stale-answers.ts), on the class with a clock the test moves:
 * what one client's one-off ids can push out (issue 40: 600 ids from one client emptied everyone's
 * 64 KiB), what clients that ask together can hold (issue 45: answers asked by two addresses froze
 * the store), what age drops, and a month of mixed traffic with floods in it, after which an outage
 * still answers what readers asked lately (issue 45). The partition itself, and the issue's
 * reproduction on a real server, are test/store/database-partition.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { StaleAnswers } from '../../src/bindings/stale-answers.js';
import type { VersionSeen } from '../../src/bindings/stale-answers.js';
import type { Reply } from '../../src/reply/reply.js';
import { StoreNotReadyError } from '../../src/store/open/background-store.js';

const reply = (body: string): Reply => ({ status: 200, contentType: 'text/xml; charset=utf-8', body, invoked: true });
const DOWN = new StoreNotReadyError();

/** A store on a clock the test moves, and the data version the answer cache would have read. */
function store(maxBytes: number, maxAgeMs = 60_000) {
  const clock = { now: 1_000_000 };
  const seen: VersionSeen = { version: null, at: 0 };
  const stale = new StaleAnswers({ maxAgeMs, maxBytes, seen, now: () => clock.now });
  return { stale, clock, seen };
}

describe('StaleAnswers', () => {
  test("one client's 600 one-off ids push out neither what several clients asked nor other clients' own", () => {
    const { stale } = store(64 * 1024);
    const answer = reply('x'.repeat(200));
    stale.keep('school-a', answer, null, '10.0.0.1');
    stale.keep('school-a', answer, null, '10.0.0.2');
    stale.keep('token-7', answer, null, '10.0.0.3');
    for (let i = 0; i < 600; i++) stale.keep(`token-${1000 + i}`, reply('y'.repeat(200)), null, '10.0.0.66');
    assert.ok(stale.bytes <= 64 * 1024);
    assert.equal(stale.answer('school-a', DOWN), answer, 'asked by two clients: kept');
    assert.equal(stale.answer('token-7', DOWN), answer, "another client's own: kept");
    assert.ok(stale.answer('token-1599', DOWN) !== undefined, "the flooding client's newest: kept");
    assert.equal(stale.answer('token-1000', DOWN), undefined, "the flooding client's oldest: gone");
  });

  test('past the budget, answers one client asked leave before those several asked', () => {
    const { stale } = store(8000);
    const answer = reply('x'.repeat(400)); // about 800 bytes each
    stale.keep('shared', answer, null, 'a');
    stale.keep('shared', answer, null, 'b');
    for (let i = 0; i < 40; i++) stale.keep(`own-${i}`, answer, null, `client-${i}`);
    assert.ok(stale.bytes <= 8000);
    assert.equal(stale.answer('shared', DOWN), answer);
    assert.equal(stale.answer('own-0', DOWN), undefined);
  });

  test('a store full of answers several clients asked still keeps a new answer asked by two readers', () => {
    const { stale } = store(64 * 1024);
    const answer = reply('x'.repeat(400));
    // 200 pairs of clients, each pair two ids: far more than the budget, none past its share.
    for (let pair = 0; pair < 200; pair++)
      for (const id of [0, 1])
        for (const client of [`192.0.2.${pair}`, `198.51.100.${pair}`])
          stale.keep(`filler-${pair}-${id}`, answer, null, client);
    assert.ok(stale.bytes <= 64 * 1024 && stale.bytes > 60 * 1024, `${stale.bytes} bytes: full`);
    const wanted = reply('w'.repeat(400));
    stale.keep('ordinary', wanted, null, '203.0.113.1');
    assert.equal(stale.answer('ordinary', DOWN), wanted, 'kept for its first reader');
    stale.keep('ordinary', wanted, null, '203.0.113.2');
    assert.equal(stale.answer('ordinary', DOWN), wanted, 'and its second');
    assert.equal(stale.answer('filler-199-1', DOWN), answer, 'the newest filler stays');
    assert.equal(stale.answer('filler-0-0', DOWN), undefined, 'the oldest made room');
  });

  test('what two clients ask together counts against each: they hold no more than one share', () => {
    const { stale } = store(64 * 1024);
    const answer = reply('x'.repeat(200));
    for (let i = 0; i < 20; i++) stale.keep(`reader-${i}`, answer, null, `192.0.2.${i}`);
    // The fill: 300 ids, each from one IPv4 address and one IPv6 /64.
    for (let i = 0; i < 300; i++) {
      stale.keep(`filler-${i}`, answer, null, '198.51.100.7');
      stale.keep(`filler-${i}`, answer, null, '2001:db8:7:1::/64', '2001:db8:7::/48');
    }
    let held = 0;
    for (let i = 0; i < 300; i++) if (stale.answer(`filler-${i}`, DOWN) !== undefined) held++;
    const each = 400 + 'filler-000'.length * 2;
    assert.ok(held * each <= (64 * 1024) / 8, `${held} fillers held: at most an eighth of the budget`);
    assert.ok(stale.answer('filler-299', DOWN) !== undefined, 'their newest kept');
    for (let i = 0; i < 20; i++) assert.equal(stale.answer(`reader-${i}`, DOWN), answer, `reader ${i} kept`);
  });

  test("a /48's clients together hold no more than the /48's share, and are one network", () => {
    const { stale } = store(64 * 1024);
    const answer = reply('x'.repeat(200));
    stale.keep('elsewhere', answer, null, '192.0.2.1');
    stale.keep('elsewhere', answer, null, '192.0.2.2');
    // 64 /64s of one /48 (what a tunnel broker gives anyone), each asking its own ids and its neighbour's.
    for (let net = 0; net < 64; net++)
      for (let i = 0; i < 20; i++)
        for (const asker of [net, (net + 1) % 64])
          stale.keep(`v6-${net}-${i}`, answer, null, `2001:db8:48:${asker.toString(16)}::/64`, '2001:db8:48::/48');
    let held = 0;
    for (let net = 0; net < 64; net++)
      for (let i = 0; i < 20; i++) if (stale.answer(`v6-${net}-${i}`, DOWN) !== undefined) held++;
    assert.ok(held * 420 <= (64 * 1024) / 4, `${held} held: at most a quarter of the budget`);
    assert.ok(held > 0);
    assert.equal(stale.answer('elsewhere', DOWN), answer);
  });

  test('answers past their age leave before anything else, and the answer being kept never does', () => {
    const { stale, clock } = store(16 * 1024, 60_000);
    const answer = reply('x'.repeat(400));
    // Answers several clients asked, then too old to serve.
    for (let i = 0; i < 30; i++) {
      stale.keep(`old-${i}`, answer, null, `192.0.2.${i}`);
      stale.keep(`old-${i}`, answer, null, `198.51.100.${i}`);
    }
    clock.now += 61_000;
    // New answers one client each asked: they take the old ones' room, not each other's.
    for (let i = 0; i < 18; i++) stale.keep(`new-${i}`, answer, null, `203.0.113.${i}`);
    for (let i = 0; i < 18; i++) assert.equal(stale.answer(`new-${i}`, DOWN), answer, `new-${i}`);
    assert.equal(stale.size, 18, 'the old ones are gone, not merely unserved');
    // Long after, one answer kept: everything past its age has left, whatever was asked how.
    clock.now += 61_000;
    stale.keep('latest', answer, null, '203.0.113.99');
    assert.equal(stale.size, 1);
    assert.equal(stale.bytes, 800 + 'latest'.length * 2);
  });

  test('an answer made at a data version is served while that version was read within maxAgeMs, no longer', () => {
    const { stale, clock, seen } = store(64 * 1024, 20_000);
    const answer = reply('list');
    Object.assign(seen, { version: 'v1', at: clock.now });
    stale.keep('school-a', answer, 'v1', 'a');
    clock.now += 15_000;
    Object.assign(seen, { version: 'v1', at: clock.now - 1000 });
    assert.equal(stale.answer('school-a', DOWN), answer, 'v1 read a second ago');
    Object.assign(seen, { version: 'v2', at: clock.now - 1000 });
    assert.equal(stale.answer('school-a', DOWN), undefined, 'changed since');
    clock.now += 10_000;
    Object.assign(seen, { version: 'v1', at: 1_000_000 });
    assert.equal(
      stale.answer('school-a', DOWN),
      undefined,
      'v1 last read 25 s ago: whoever may have changed the data since, it is not served',
    );
    Object.assign(seen, { version: null, at: 0 });
    assert.equal(stale.answer('school-a', DOWN), undefined, 'no version read at all');
    stale.keep('token-1', answer, null, 'a');
    clock.now += 19_000;
    assert.equal(stale.answer('token-1', DOWN), answer, 'without a version: bounded by when it was made');
    clock.now += 2000;
    assert.equal(stale.answer('token-1', DOWN), undefined);
  });

  test('an answer that can no longer be kept takes the one before it away', () => {
    const { stale } = store(8000);
    stale.keep('token-1', reply('old'), null, 'a');
    stale.keep('token-1', reply('x'.repeat(4000)), null, 'a');
    assert.equal(stale.answer('token-1', DOWN), undefined, 'the old answer is not what the database said last');
    assert.equal(stale.bytes, 0);
  });

  test('a month of mixed traffic with floods in it: an outage then answers what readers asked lately', () => {
    const maxBytes = 512 * 1024;
    const maxAgeMs = 5 * 60_000;
    const { stale, clock, seen } = store(maxBytes, maxAgeMs);
    let seed = 45;
    const random = (): number => {
      // A fixed sequence (mulberry32): the same month every run.
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
    const pick = (n: number): number => Math.floor(random() * n);
    const bodies = Array.from({ length: 7 }, (_, k) => reply('d'.repeat(300 + k * 150)));
    const body = (n: number): Reply => bodies[n % 7]!;
    // 3,000 readers: most on one IPv4 address, some on a phone that moves between an IPv4 address
    // and an IPv6 /64 (their answers are then asked from two networks), some behind a school's
    // NAT (one address for many); each reads its own device token and now and then a school list.
    interface Reader {
      readonly token: string;
      readonly addresses: readonly [string, string | null][];
    }
    const readers: Reader[] = Array.from({ length: 3000 }, (_, i) => {
      const v4: [string, null] = [i % 10 === 0 ? `10.1.0.${i % 50}` : `10.2.${i >> 8}.${i & 255}`, null];
      const v6: [string, string] = [
        `2001:db8:${(i % 200).toString(16)}:${i.toString(16)}::/64`,
        `2001:db8:${(i % 200).toString(16)}::/48`,
      ];
      return { token: `token-${i}`, addresses: i % 3 === 0 ? [v4, v6] : [v4] };
    });
    const schools = Array.from({ length: 40 }, (_, i) => `school-${i}`);
    /** The version each school list was last made at (the answer cache's entries). */
    const made = new Map<string, string>();
    let version = 1;
    const asked = new Map<string, number>(); // reader keys and when last asked
    const flood = (count: number): void => {
      // Two addresses asking the same new ids: every one "asked by two clients".
      for (let i = 0; i < count; i++) {
        const id = `flood-${clock.now}-${i}`;
        stale.keep(id, body(i), null, '203.0.113.66');
        stale.keep(id, body(i), null, '2001:db8:bad:1::/64', '2001:db8:bad::/48');
      }
    };
    const day = 86_400_000;
    const end = clock.now + 30 * day;
    const floods = [
      [clock.now + 10 * day, clock.now + 10 * day + 3_600_000],
      [end - 3_600_000, end],
    ] as const;
    let reads = 0;
    while (clock.now < end) {
      clock.now += 10_000;
      // A read every few seconds, and now and then a mistyped id.
      for (let n = 0; n < 4; n++) {
        const reader = readers[pick(readers.length)]!;
        const [client, site] = reader.addresses[pick(reader.addresses.length)]!;
        reads++;
        if (random() < 0.2) {
          const school = schools[pick(schools.length)]!;
          const current = `v${version}`;
          Object.assign(seen, { version: current, at: clock.now });
          // The answer cache's hit counts as asked (and is kept again if it had left), its miss makes it again.
          if (made.get(school) === current) {
            if (!stale.asked(school, client, site)) stale.keep(school, body(school.length), current, client, site);
          } else {
            stale.keep(school, body(school.length), current, client, site);
            made.set(school, current);
          }
          asked.set(school, clock.now);
        } else {
          const key = random() < 0.05 ? `typo-${reads}` : reader.token;
          stale.keep(key, body(key.length), null, client, site);
          asked.set(key, clock.now);
        }
      }
      // An import every three days moves the data version.
      if (clock.now % (3 * day) < 10_000) version++;
      for (const [from, to] of floods) if (clock.now >= from && clock.now < to) flood(40);
      assert.ok(stale.bytes <= maxBytes);
    }
    // The database goes: every answer a reader asked in the last minutes is served.
    const lately = [...asked].filter(([, at]) => clock.now - at < maxAgeMs);
    const missing = lately.filter(([key]) => stale.answer(key, DOWN) === undefined).map(([key]) => key);
    assert.ok(lately.length > 60, `${lately.length} answers asked lately`);
    assert.deepEqual(missing, [], `${missing.length} of ${lately.length} answers asked lately are not served`);
  });
});
