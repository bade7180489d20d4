/**
 * Retention on both stores: codes and delivered or failed messages older than their retention are
 * removed in batches, younger ones and every pending message kept, and counted once; a delivered
 * message's code and text are erased the moment it is delivered (phone masked), a failed one keeps
 * them until retried; the hourly limit counts the same right after a prune; and two pruners on
 * one database at once share the work without doing any of it twice.
 */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { Pruner } from '../../src/retention/pruner.js';
import type { PrunerOptions, RetentionPolicy } from '../../src/retention/pruner.js';
import { openStore } from '../../src/store/open/open-store.js';
import { maskPhone } from '../../src/store/phone-mask.js';
import type { SqlStore } from '../../src/store/sql/sql-store.js';
import { seedCodes, seedMessages } from '../helpers/retention-seed.js';
import { cleanupTargets, storeTargets, withFreshStore } from '../helpers/store-targets.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const NOW = new Date('2030-06-01T12:00:00.000Z');
const ago = (ms: number): Date => new Date(NOW.getTime() - ms);
const THIRTY_DAYS: RetentionPolicy = { keepMs: { auth_codes: 30 * DAY, outbox: 30 * DAY }, authCodeFloorMs: HOUR };
/** Tiny batches, no pauses: several batches per table even for a handful of rows. */
const SMALL: PrunerOptions = { intervalMs: 60_000, batchRows: 3, pauseFactor: 0, minPauseMs: 0 };

const pruner = (store: SqlStore, policy = THIRTY_DAYS, options = SMALL): Pruner =>
  new Pruner(store.retention, policy, null, options, () => NOW);

async function accept(store: SqlStore, code: string, phone: string, at: Date, maxPerHour = 0): Promise<boolean> {
  return (await store.acceptAuthCode({ code, phone, at, message: `Your code is ${code}`, maxPerHour })).accepted;
}

/** Accepts a code at `at` and takes its message to `state` (claimed at `at`, finished then). */
async function message(
  store: SqlStore,
  code: string,
  phone: string,
  at: Date,
  state: 'pending' | 'delivered' | 'failed',
): Promise<void> {
  assert.ok(await accept(store, code, phone, at));
  if (state === 'pending') return;
  const [claimed] = await store.claimOutbox('w', at, 1000, 1);
  assert.equal(claimed?.code, code);
  await store.finishOutbox(
    claimed.id,
    'w',
    state === 'delivered' ? { state, at } : { state, error: 'gateway answered 400' },
  );
}

after(() => cleanupTargets());

for (const target of storeTargets) {
  describe(`retention on ${target.name}`, { skip: target.skip ?? undefined }, () => {
    test('codes and finished messages older than the retention go; younger ones and every pending message stay', async () => {
      await withFreshStore(target, async (store, db) => {
        for (const [i, state] of (['delivered', 'failed', 'delivered', 'failed'] as const).entries()) {
          await message(store, `old-${state}-${i}`, `+1555000001${i}`, ago(31 * DAY + i * HOUR), state);
        }
        await message(store, 'young-delivered', '+15550000021', ago(29 * DAY), 'delivered');
        await message(store, 'young-failed', '+15550000022', ago(29 * DAY), 'failed');
        // Pending last: a claim would otherwise take them (they are due).
        await message(store, 'old-pending', '+15550000001', ago(40 * DAY), 'pending');
        await message(store, 'young-pending', '+15550000023', ago(1 * DAY), 'pending');
        await seedCodes(target, db, 7, ago(45 * DAY), 'older');

        const prune = pruner(store);
        const before = ago(30 * DAY);
        // 5 + 7 codes older than 30 days; 4 finished messages (the old pending one stays).
        assert.deepEqual(await prune.prune({ dryRun: true }), {
          tables: { auth_codes: { before, removed: 12 }, outbox: { before, removed: 4 } },
          erased: 0,
        });
        assert.equal(
          Number((await db.sql('select count(*) as n from auth_codes'))[0]!['n']),
          15,
          'a dry run changes nothing',
        );

        assert.deepEqual(await prune.prune(), {
          tables: { auth_codes: { before, removed: 12 }, outbox: { before, removed: 4 } },
          erased: 0,
        });
        assert.deepEqual(prune.pruned, { auth_codes: 12, outbox: 4 });
        const codes = await db.sql('select code from auth_codes order by id');
        assert.deepEqual(
          codes.map((r) => r['code']),
          ['young-delivered', 'young-failed', 'young-pending'],
          'the 40-day-old code of the pending message goes too: the limit and the outbox do not need it',
        );
        const left = await db.sql('select state, created_at from outbox order by id');
        assert.deepEqual(
          left.map((r) => r['state']),
          ['delivered', 'failed', 'pending', 'pending'],
          'the 40-day-old pending message is kept, and the young ones',
        );
        assert.deepEqual(await store.retention.retentionCounts(), {
          auth_codes: { kept: 3, pruned: 12 },
          outbox: { kept: 4, pruned: 4 },
        });
        assert.deepEqual(await prune.prune(), {
          tables: { auth_codes: { before, removed: 0 }, outbox: { before, removed: 0 } },
          erased: 0,
        });

        // A retention of 0 keeps the table forever; --older-than still reaches it (pending ones excepted).
        const forever = pruner(store, { keepMs: { auth_codes: 0, outbox: 0 }, authCodeFloorMs: 0 });
        assert.deepEqual(await forever.prune(), { tables: { auth_codes: null, outbox: null }, erased: 0 });
        const all = await forever.prune({ olderThanMs: 0 });
        assert.deepEqual([all.tables.auth_codes?.removed, all.tables.outbox?.removed], [3, 2]);
        assert.deepEqual(
          (await db.sql('select state from outbox')).map((r) => r['state']),
          ['pending', 'pending'],
        );
      });
    });

    test('a delivered message is erased at once, phone masked; a failed one keeps its text until retried', async () => {
      await withFreshStore(target, async (store, db) => {
        const phones = ['+15550100777', '4915112345678', '+1234567'];
        for (const [i, phone] of phones.entries()) await message(store, `SENT-${i}`, phone, ago(HOUR), 'delivered');
        await message(store, 'FAILED-1', '+15550100888', ago(HOUR), 'failed');
        const rows = await db.sql(
          'select id, phone, code, message, state, attempts, next_attempt_at, created_at, delivered_at from outbox order by id',
        );
        assert.deepEqual(
          rows.map((r) => [r['phone'], r['code'], r['message'], r['state'], Number(r['attempts'])]),
          [
            ['+*********77', '', '', 'delivered', 1],
            ['***********78', '', '', 'delivered', 1],
            ['+*****67', '', '', 'delivered', 1],
            ['+15550100888', 'FAILED-1', 'Your code is FAILED-1', 'failed', 1],
          ],
        );
        assert.deepEqual(
          rows.slice(0, 3).map((r) => r['phone']),
          phones.map(maskPhone),
          'masked as the CLI and the logs mask',
        );
        for (const r of rows.slice(0, 3)) {
          for (const time of ['next_attempt_at', 'created_at', 'delivered_at'])
            assert.equal(new Date(r[time] as string).getTime(), ago(HOUR).getTime(), time);
        }
        // Retried, it is sent with its text, and erased once delivered.
        assert.equal(await store.retryOutbox('failed', NOW), 1);
        const [again] = await store.claimOutbox('w', NOW, 1000, 5);
        assert.deepEqual([again?.code, again?.message], ['FAILED-1', 'Your code is FAILED-1']);
        await store.finishOutbox(again!.id, 'w', { state: 'delivered', at: NOW });
        assert.deepEqual(await db.sql(`select phone, code, message from outbox where id = ${again!.id}`), [
          { phone: '+*********88', code: '', message: '' },
        ]);
        // The codes themselves stay in auth_codes, for their own retention (the hourly limit needs them).
        assert.equal(
          Number((await db.sql("select count(*) as n from auth_codes where code like 'SENT-%'"))[0]!['n']),
          3,
        );
      });
    });

    test('delivered messages stored before erasing at delivery are erased by the first prune', async () => {
      await withFreshStore(target, async (store, db) => {
        await seedMessages(target, db, 7, ago(2 * DAY), 'delivered', 'legacy');
        await seedMessages(target, db, 2, ago(2 * DAY), 'failed', 'kept');
        const prune = pruner(store);
        assert.equal((await prune.prune({ dryRun: true })).erased, 7);
        assert.equal((await prune.prune()).erased, 7);
        assert.equal(await store.retention.countUnerased(), 0);
        const rows = await db.sql("select phone, code, message from outbox where state = 'delivered'");
        assert.equal(rows.length, 7, 'erased, not removed: younger than the retention');
        assert.ok(
          rows.every((r) => r['code'] === '' && r['message'] === '' && /^\+\*{9}\d\d$/.test(r['phone'] as string)),
          JSON.stringify(rows[0]),
        );
        assert.equal(
          Number(
            (
              await db.sql(
                "select count(*) as n from outbox where state = 'failed' and message like 'Your code is kept-%'",
              )
            )[0]!['n'],
          ),
          2,
        );
      });
    });

    test('the hourly limit counts the same right after a prune', async () => {
      await withFreshStore(target, async (store) => {
        const phone = '+15550100555';
        for (const minutes of [180, 150, 120])
          assert.ok(await accept(store, `early-${minutes}`, phone, ago(minutes * 60_000), 5));
        for (const minutes of [50, 40, 30, 20, 10])
          assert.ok(await accept(store, `late-${minutes}`, phone, ago(minutes * 60_000), 5));
        // The shortest retention the limit allows, and `--older-than 0s`: either way the last hour stays.
        const shortest = pruner(store, { keepMs: { auth_codes: HOUR, outbox: 0 }, authCodeFloorMs: HOUR });
        assert.equal((await shortest.prune()).tables.auth_codes?.removed, 3);
        assert.equal(
          (await shortest.prune({ olderThanMs: 0 })).tables.auth_codes?.removed,
          0,
          'codes of the last hour are never pruned while the limit is on',
        );
        assert.deepEqual(
          await store.acceptAuthCode({ code: 'sixth', phone, at: NOW, message: 'Your code is sixth', maxPerHour: 5 }),
          {
            accepted: false,
            reason: 'phone-hourly',
            retryAfterSeconds: 600,
          },
        );
        assert.ok(
          await accept(store, 'after-the-hour', phone, new Date(NOW.getTime() + 600_000), 5),
          'free again once the oldest of the hour is an hour old',
        );
      });
    });

    test('two pruners on one database at once: every old row removed once, both finish', async (t) => {
      const db = await target.fresh();
      // One after the other: on SQLite, the second's synchronous open would wait on the first's migration in this same thread.
      const a = await openStore(db.url, { poolSize: 2 });
      const b = await openStore(db.url, { poolSize: 2 });
      try {
        await seedCodes(target, db, 3000, ago(40 * DAY), 'old');
        await seedCodes(target, db, 50, ago(DAY), 'young');
        await seedMessages(target, db, 1200, ago(40 * DAY), 'failed', 'old');
        await seedMessages(target, db, 300, ago(40 * DAY), 'pending', 'waiting');
        const options: PrunerOptions = { ...SMALL, batchRows: 100 };
        const [ra, rb] = await Promise.all([
          pruner(a, THIRTY_DAYS, options).prune(),
          pruner(b, THIRTY_DAYS, options).prune(),
        ]);
        const removed = (table: 'auth_codes' | 'outbox'): number =>
          (ra.tables[table]?.removed ?? 0) + (rb.tables[table]?.removed ?? 0);
        assert.deepEqual([removed('auth_codes'), removed('outbox')], [3000, 1200], 'no row counted by both');
        assert.deepEqual(await a.retention.retentionCounts(), {
          auth_codes: { kept: 50, pruned: 3000 },
          outbox: { kept: 300, pruned: 1200 },
        });
        const shares = `a removed ${ra.tables.auth_codes?.removed}+${ra.tables.outbox?.removed}, b ${rb.tables.auth_codes?.removed}+${rb.tables.outbox?.removed}`;
        t.diagnostic(shares);
      } finally {
        await Promise.all([a.close(), b.close()]);
      }
    });
  });
}
