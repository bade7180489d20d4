/**
 * The attack of issue 21 against the defaults, on SQLite, PostgreSQL and with Redis: 2,000 codes
 * to consecutive numbers of one range from one address, then 2,000 more from 200 addresses,
 * while 300 parents (valid mobiles written the ways people write them, each from an address of
 * their own, a few mistyped and retried, a few asking twice) all get their codes. The outbox
 * holds the parents' codes and the range's twenty; every refusal has the right reason; `sis
 * outbox stats` names the range.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { runSis } from '../helpers/serve-process.js';
import {
  authCode,
  backends,
  inParallel,
  midHour,
  queued,
  refusals,
  saudiMobiles,
  SMS_DEFAULTS,
} from '../helpers/sms-calls.js';
import type { Answer } from '../helpers/sms-calls.js';
import { cleanupTargets } from '../helpers/store-targets.js';
import { startTestServer } from '../helpers/test-server.js';

const RANGE = '+96650123';
/** The issue's 2,000 on SQLite; a quarter on the other backends, where only the counters' home differs (the machine is small). */
const attackSizeOf = (backend: string): number => (backend === 'SQLite' ? 2000 : 500);

after(() => cleanupTargets());

for (const backend of backends) {
  describe(`SMS pumping against the defaults on ${backend.name}`, { skip: backend.skip ?? false }, () => {
    const attackSize = attackSizeOf(backend.name);
    it(`refuses ${attackSize} codes to one range from one address, then ${attackSize} from 200 addresses, by range; accepts every parent`, async () => {
      const { db, env } = await backend.fresh();
      const server = await startTestServer({ env: { ...SMS_DEFAULTS, ...env }, now: midHour() });
      const attack: Answer[] = [];
      const parents: { final: Answer; first: Answer | null }[] = [];
      try {
        const numbers = Array.from({ length: attackSize * 2 }, (_, i) => `${RANGE}${String(i).padStart(4, '0')}`);
        const attacker = async (): Promise<void> => {
          // One address, then 200 addresses of ten codes each.
          await inParallel(numbers.slice(0, attackSize), 8, async (phone) => {
            attack.push(await authCode(server.url, phone, '203.0.113.7'));
          });
          await inParallel(numbers.slice(attackSize), 8, async (phone) => {
            const n = Number(phone.slice(-4)) - attackSize;
            attack.push(await authCode(server.url, phone, `198.51.${n % 200}.9`));
          });
        };
        const mobiles = saudiMobiles(300, 21, RANGE);
        const parent = async (i: number): Promise<void> => {
          const national = mobiles[i]!;
          const address = `10.20.${Math.floor(i / 250)}.${i % 250}`;
          // As people write them: local, international with spaces, or with the international prefix.
          const written = [`0${national}`, `+966 ${national.slice(0, 2)} ${national.slice(2)}`, `00966${national}`][
            i % 3
          ]!;
          // Every tenth first mistypes (a digit short), then sends the number right; every fifteenth asks twice.
          const first = i % 10 === 0 ? await authCode(server.url, written.slice(0, -2), address) : null;
          if (i % 15 === 0) await authCode(server.url, written, address);
          parents.push({ first, final: await authCode(server.url, written, address) });
        };
        await Promise.all([
          attacker(),
          inParallel(
            mobiles.map((_, i) => i),
            4,
            parent,
          ),
        ]);
        assert.equal(parents.length, 300);
        assert.deepEqual(
          parents.filter((p) => p.final.status !== 200),
          [],
          'every parent gets a code',
        );
        for (const p of parents.filter((q) => q.first !== null)) assert.match(p.first!.text, /^Invalid phone/);
        assert.equal(attack.filter((a) => a.status === 200).length, 20, 'the range gets its hourly twenty');
        const refused = attack.filter((a) => a.status !== 200);
        assert.equal(refused.length, attackSize * 2 - 20);
        assert.ok(
          refused.every((a) => a.text === 'Codes cannot be sent to this phone right now. Try again in 30 minutes.'),
        );
        assert.deepEqual(
          Object.fromEntries(await refusals(server.url)),
          { range: attackSize * 2 - 20, invalid: 30 },
          'refused for the right reasons',
        );
        assert.deepEqual(Object.fromEntries(await queued(server.url)), { SA: 20 + 300 + 20 });
      } finally {
        await server.close();
      }
      const outbox = await db.sql('select phone from outbox');
      assert.equal(outbox.length, 340, "the range's twenty, the parents' 300 and 20 second asks");
      assert.equal(outbox.filter((r) => String(r.phone).startsWith(RANGE)).length, 20);
      assert.ok(
        outbox.every((r) => /^\+9665\d{8}$/.test(String(r.phone))),
        'stored in international form',
      );
      const stats = await runSis(['outbox', 'stats'], db.url);
      assert.equal(stats.code, 0, stats.stderr);
      assert.match(stats.stdout, new RegExp(`^refused_hour:range\\t${attackSize * 2 - 20}$`, 'm'));
      assert.match(stats.stdout, /^refused_day:invalid\t30$/m);
      assert.match(stats.stdout, new RegExp(`^range_hour:\\${RANGE}\\t${attackSize * 2}$`, 'm'));
      assert.match(stats.stdout, new RegExp(`^country_day:SA\\t${attackSize * 2 + 350}$`, 'm'));
    });
  });
}
