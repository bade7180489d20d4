/**
 * AuthCode never turns a real parent away (issue 28), on SQLite and PostgreSQL, each alone and with
 * Redis, each with two instances sharing the counters (codes asked of both in turn): a parents' evening (200
 * parents behind the school's one address) and carrier-grade NAT (300 parents behind 3 addresses)
 * all accepted with the defaults; an IPv6 attacker rotating through one /64 limited as one
 * address (and a site's /56 as one with SIS_SMS_IPV6_PREFIX=56); a retry of the same code sent
 * once and counted once; trusted networks exempt from the address limit; test numbers never sent
 * nor counted; monitor mode refusing nothing while counting and logging what it would refuse.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, describe, it } from 'node:test';
import { runSis } from '../helpers/serve-process.js';
import {
  authCode,
  everyBackend,
  inParallel,
  midHour,
  refusals,
  saudiMobiles,
  SMS_DEFAULTS,
} from '../helpers/sms-calls.js';
import type { Answer, Backend } from '../helpers/sms-calls.js';
import { cleanupTargets } from '../helpers/store-targets.js';
import type { FreshDatabase } from '../helpers/store-targets.js';
import { startTestServer } from '../helpers/test-server.js';
import type { TestServer } from '../helpers/test-server.js';

after(() => cleanupTargets());

interface Pair {
  readonly db: FreshDatabase;
  readonly servers: readonly TestServer[];
  /** Log lines of both instances (JSON). */
  readonly lines: string[];
  /** AuthCode asked of the instances in turn. */
  ask(phone: string, address: string, code?: string): Promise<Answer>;
  close(): Promise<void>;
}

/** Two instances on one fresh database (and Redis), with the defaults and `env`. */
async function pair(backend: Backend, env: Record<string, string> = {}, now = midHour()): Promise<Pair> {
  const fresh = await backend.fresh();
  const lines: string[] = [];
  const logDestination = new Writable({
    write(chunk: Buffer, _enc, cb) {
      lines.push(chunk.toString());
      cb();
    },
  });
  const servers: TestServer[] = [];
  for (let i = 0; i < 2; i++)
    servers.push(
      await startTestServer({
        env: { ...SMS_DEFAULTS, ...fresh.env, LOG_LEVEL: 'warn', ...env },
        now,
        logDestination,
      }),
    );
  let turn = 0;
  return {
    db: fresh.db,
    servers,
    lines,
    ask: (phone, address, code) => authCode(servers[turn++ % 2]!.url, phone, address, code),
    close: async () => {
      for (const s of servers) await s.close();
    },
  };
}

async function allRefusals(p: Pair): Promise<Record<string, number>> {
  const total = new Map<string, number>();
  for (const s of p.servers) for (const [k, n] of await refusals(s.url)) total.set(k, (total.get(k) ?? 0) + n);
  return Object.fromEntries(total);
}

/** sis_auth_code_refusals_total{mode="monitor"} of both instances, by reason. */
async function monitored(p: Pair): Promise<Record<string, number>> {
  const total = new Map<string, number>();
  for (const s of p.servers) {
    const text = await (await fetch(`${s.url}/metrics`)).text();
    for (const m of text.matchAll(/^sis_auth_code_refusals_total\{reason="([^"]+)",mode="monitor"\} (\d+)$/gm))
      total.set(m[1]!, (total.get(m[1]!) ?? 0) + Number(m[2]));
  }
  return Object.fromEntries(total);
}

const count = async (db: FreshDatabase, query: string): Promise<number> => Number((await db.sql(query))[0]!.n);
const statuses = (answers: readonly Answer[]): number[] => answers.map((a) => a.status);

for (const backend of everyBackend) {
  describe(`AuthCode for parents on ${backend.name}, two instances`, { skip: backend.skip ?? false }, () => {
    it("accepts a parents' evening (200 parents, one address) and 300 parents behind 3 carrier addresses", async () => {
      const p = await pair(backend);
      const mobiles = saudiMobiles(500, 28, '+96650123');
      const answers: Answer[] = [];
      try {
        await inParallel(
          mobiles.map((_, i) => i),
          6,
          async (i) => {
            const address = i < 200 ? '203.0.113.50' : `198.51.100.${i % 3}`;
            answers.push(await p.ask(`0${mobiles[i]!}`, address));
          },
        );
        assert.deepEqual(
          answers.filter((a) => a.status !== 200),
          [],
          'every parent gets a code',
        );
        assert.deepEqual(await allRefusals(p), {});
      } finally {
        await p.close();
      }
      assert.equal(await count(p.db, 'select count(*) as n from outbox'), 500);
    });

    it('counts an IPv6 client by its /64 (a /56 with SIS_SMS_IPV6_PREFIX=56): rotating addresses multiplies nothing', async () => {
      const mobiles = saudiMobiles(90, 64, '+96650123');
      const limits = { SIS_AUTH_CODES_PER_ADDRESS_HOUR: '20' };
      const p = await pair(backend, limits);
      const q = await pair(backend, { ...limits, SIS_SMS_IPV6_PREFIX: '56' });
      try {
        // 30 addresses of one /64: twenty codes; then another /64 of the same /56 gets its own twenty.
        const one64: Answer[] = [];
        for (let i = 0; i < 30; i++) one64.push(await p.ask(`0${mobiles[i]!}`, `2001:db8:1:2:${i.toString(16)}::7`));
        assert.equal(one64.filter((a) => a.status === 200).length, 20);
        assert.match(one64[29]!.text, /^Too many codes asked from this address\. Try again in 30 minutes\.$/);
        assert.equal((await p.ask(`0${mobiles[30]!}`, '2001:db8:1:3::7')).status, 200, 'another /64');
        // With /56, the /64s of one site count together.
        const site: Answer[] = [];
        for (let i = 40; i < 70; i++)
          site.push(await q.ask(`0${mobiles[i]!}`, `2001:db8:7:${(i % 200).toString(16)}::1`));
        assert.equal(site.filter((a) => a.status === 200).length, 20);
        assert.deepEqual(await allRefusals(p), { address: 10 });
        assert.equal((await q.ask(`0${mobiles[80]!}`, '2001:db8:7:100::1')).status, 200, 'another /56');
      } finally {
        await p.close();
        await q.close();
      }
    });

    it('answers a retry of the same code as accepted, without a second SMS or count; another code is a new one', async () => {
      let at = midHour()().getTime();
      const p = await pair(backend, {}, () => new Date(at));
      const phone = '+966551234567';
      try {
        // The app timed out and sent the same code three times within 9 s.
        const retries: Answer[] = [];
        for (let i = 0; i < 3; i++) {
          retries.push(await p.ask(phone, '10.7.0.1', '111111'));
          at += 3000;
        }
        assert.deepEqual(statuses(retries), [200, 200, 200]);
        // Four more codes fill the phone's five an hour: the retries counted once.
        const later: Answer[] = [];
        for (const code of ['222222', '333333', '444444', '555555', '666666'])
          later.push(await p.ask(phone, '10.7.0.1', code));
        assert.deepEqual(statuses(later), [200, 200, 200, 200, 500]);
        assert.match(later[4]!.text, /^Too many codes for this phone: at most 5 an hour\./);
      } finally {
        await p.close();
      }
      assert.equal(await count(p.db, 'select count(*) as n from outbox'), 5);
      assert.deepEqual(
        (await p.db.sql("select code from outbox where code = '111111'")).map((r) => r.code),
        ['111111'],
        'one message for the three tries',
      );
    });

    it('sends the same code again once SIS_AUTH_CODE_REPEAT_MS has passed', async () => {
      let at = midHour()().getTime();
      const p = await pair(backend, { SIS_AUTH_CODE_REPEAT_MS: '60000' }, () => new Date(at));
      try {
        assert.equal((await p.ask('+966551234568', '10.7.0.2', '777777')).status, 200);
        at += 30_000;
        assert.equal((await p.ask('+966551234568', '10.7.0.2', '777777')).status, 200);
        at += 31_000;
        assert.equal((await p.ask('+966551234568', '10.7.0.2', '777777')).status, 200);
      } finally {
        await p.close();
      }
      assert.equal(await count(p.db, 'select count(*) as n from outbox'), 2);
    });

    it('exempts trusted networks from the address limit, and records test numbers as test codes never sent nor counted', async () => {
      const mobiles = saudiMobiles(30, 3, '+96650123');
      const p = await pair(backend, {
        SIS_AUTH_CODES_PER_ADDRESS_HOUR: '5',
        SIS_SMS_HOURLY_BUDGET: '22',
        SIS_SMS_TRUSTED_ADDRESSES: '10.50.0.0/16, 2001:db8:aa::/48',
        SIS_SMS_TEST_NUMBERS: '+966 500 000 001, +15550100',
      });
      try {
        const school: Answer[] = [];
        for (let i = 0; i < 10; i++) school.push(await p.ask(`0${mobiles[i]!}`, `10.50.${i}.9`));
        for (let i = 10; i < 15; i++) school.push(await p.ask(`0${mobiles[i]!}`, '2001:db8:aa:1::5'));
        assert.deepEqual(statuses(school), Array<number>(15).fill(200), 'trusted: no address limit');
        const other: Answer[] = [];
        for (let i = 15; i < 22; i++) other.push(await p.ask(`0${mobiles[i]!}`, '10.51.0.1'));
        assert.deepEqual(statuses(other), [200, 200, 200, 200, 200, 500, 500]);
        // Test numbers: any number of codes, as written or locally, made-up ones too; no limit, no budget.
        const tests: Answer[] = [];
        for (let i = 0; i < 12; i++) tests.push(await p.ask(i % 2 === 0 ? '0500000001' : '+15550100', '10.51.0.1'));
        assert.deepEqual(statuses(tests), Array<number>(12).fill(200));
        // The budget's twenty-two: twenty codes counted so far, the test codes not among them.
        assert.equal((await p.ask(`0${mobiles[25]!}`, '10.52.0.1')).status, 200);
        assert.equal((await p.ask(`0${mobiles[26]!}`, '10.52.0.2')).status, 200);
        assert.equal((await p.ask(`0${mobiles[27]!}`, '10.52.0.3')).status, 500, 'the budget');
        assert.deepEqual(await allRefusals(p), { address: 2, 'budget-hourly': 1 });
      } finally {
        await p.close();
      }
      assert.equal(await count(p.db, 'select count(*) as n from outbox'), 22);
      assert.equal(
        await count(p.db, "select count(*) as n from outbox where phone in ('+966500000001', '+15550100')"),
        0,
      );
      assert.deepEqual(
        (
          await p.db.sql('select phone, count(*) as n from auth_codes where test = 1 group by phone order by phone')
        ).map((r) => [r.phone, Number(r.n)]),
        [
          ['+15550100', 6],
          ['+966500000001', 6],
        ],
      );
    });

    it('refuses nothing in monitor mode: counts and logs (once a minute per reason) what it would refuse', async () => {
      // A bare monitor leaves the number rule enforced (sms-brakes.test.ts): named here, it watches too.
      const p = await pair(backend, {
        SIS_SMS_GUARD: 'monitor,number=monitor',
        SIS_AUTH_CODES_PER_RANGE_HOUR: '3',
        SIS_AUTH_CODES_PER_HOUR: '2',
      });
      try {
        const range: Answer[] = [];
        for (let i = 0; i < 8; i++) range.push(await p.ask(`+96656777000${i}`, `10.8.0.${i}`));
        const phone: Answer[] = [];
        for (let i = 0; i < 4; i++) phone.push(await p.ask('+966551112233', '10.8.1.1'));
        const premium = await p.ask('+1 900 555 0123', '10.8.2.1');
        assert.deepEqual(statuses([...range, ...phone, premium]), Array<number>(13).fill(200), 'nothing refused');
        assert.deepEqual(await allRefusals(p), {}, 'no refusal counted as one');
        // The range's five past its three, and the phone's fourth code (its range's fourth too).
        assert.deepEqual(await monitored(p), { range: 6, 'phone-hourly': 2, 'number-type': 1 });
        const logged = p.lines.filter((l) => l.includes('monitor mode'));
        for (const reason of ['range', 'phone-hourly', 'number-type']) {
          // One line per reason per instance at most (two instances each log their first).
          const n = logged.filter((l) => l.includes(`"reason":"${reason}"`)).length;
          assert.ok(n >= 1 && n <= 2, `${reason}: ${n} lines`);
        }
        for (const server of p.servers) await server.close();
      } finally {
        await p.close();
      }
      const stats = await runSis(['outbox', 'stats'], p.db.url);
      assert.equal(stats.code, 0, stats.stderr);
      assert.match(stats.stdout, /^refused_hour:monitor:range\t6$/m);
      assert.match(stats.stdout, /^refused_hour:monitor:phone-hourly\t2$/m);
      assert.equal(await count(p.db, 'select count(*) as n from outbox'), 13);
    });

    it('watches one layer while the others enforce (SIS_SMS_GUARD=enforce,range=monitor)', async () => {
      const p = await pair(backend, {
        SIS_SMS_GUARD: 'enforce,range=monitor',
        SIS_AUTH_CODES_PER_RANGE_HOUR: '2',
        SIS_AUTH_CODES_PER_ADDRESS_HOUR: '4',
      });
      try {
        const answers: Answer[] = [];
        for (let i = 0; i < 6; i++) answers.push(await p.ask(`+96656888000${i}`, '10.9.9.9'));
        assert.deepEqual(statuses(answers), [200, 200, 200, 200, 500, 500]);
        assert.deepEqual(await allRefusals(p), { address: 2 });
        assert.deepEqual(await monitored(p), { range: 2 });
      } finally {
        await p.close();
      }
    });
  });
}
