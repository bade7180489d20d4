/**
 * acceptAuthCode on both stores: the code and its message in one transaction (a failing outbox
 * insert leaves no code behind), the per-phone hourly limit over a sliding hour with the time
 * until a code is accepted again, and the limit holding when two stores (two instances) accept
 * for one phone at the same moment.
 */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { openStore } from '../../src/store/open/open-store.js';
import type { SqlStore } from '../../src/store/sql/sql-store.js';
import type { AuthCodeOutcome } from '../../src/store/store.js';
import { cleanupTargets, storeTargets, withFreshStore } from '../helpers/store-targets.js';
import type { FreshDatabase } from '../helpers/store-targets.js';

const T0 = new Date('2030-05-06T07:00:00.000Z');
const minutes = (n: number): Date => new Date(T0.getTime() + n * 60_000);

function accept(store: SqlStore, phone: string, at: Date, maxPerHour = 3, code = 'c0de'): Promise<AuthCodeOutcome> {
  return store.acceptAuthCode({ code, phone, at, message: `text ${code}`, maxPerHour });
}

async function count(db: FreshDatabase, table: 'auth_codes' | 'outbox'): Promise<number> {
  const [row] = await db.sql(`select count(*) as n from ${table}`);
  return Number(row!['n']);
}

after(() => cleanupTargets());

for (const target of storeTargets) {
  describe(`acceptAuthCode on ${target.name}`, { skip: target.skip ?? undefined }, () => {
    test('at most N codes per phone within an hour, the hour sliding; the refusal says when to come back', async () => {
      await withFreshStore(target, async (store, db) => {
        for (const m of [0, 10, 20])
          assert.deepEqual(await accept(store, '+15550100100', minutes(m)), { accepted: true });
        assert.deepEqual(await accept(store, '+15550100100', minutes(30)), {
          accepted: false,
          reason: 'phone-hourly',
          retryAfterSeconds: 30 * 60,
        });
        assert.deepEqual(await accept(store, '+15550100100', minutes(59)), {
          accepted: false,
          reason: 'phone-hourly',
          retryAfterSeconds: 60,
        });
        assert.equal(await count(db, 'auth_codes'), 3, 'a refused code is not stored');
        assert.equal(await count(db, 'outbox'), 3, 'nor queued');
        assert.deepEqual(
          await accept(store, '+15550100200', minutes(30)),
          { accepted: true },
          'another phone has its own count',
        );
        // The code of minute 0 leaves the hour: one more fits.
        assert.deepEqual(await accept(store, '+15550100100', new Date(minutes(60).getTime() + 1)), { accepted: true });
        assert.deepEqual(await accept(store, '+15550100100', minutes(61)), {
          accepted: false,
          reason: 'phone-hourly',
          retryAfterSeconds: 9 * 60,
        });
        // A lower limit than the codes already in the hour: wait until enough have left.
        assert.deepEqual(await accept(store, '+15550100100', minutes(62), 2), {
          accepted: false,
          reason: 'phone-hourly',
          retryAfterSeconds: 18 * 60,
        });
        assert.deepEqual(await accept(store, '+15550100100', minutes(62), 0), { accepted: true }, '0: no limit');
      });
    });

    test('the code and its message are one transaction: a failing outbox insert stores nothing', async () => {
      await withFreshStore(target, async (store, db) => {
        if (target.name === 'SQLite') {
          await db.sql(
            `create trigger outbox_boom before insert on outbox begin select raise(abort, 'outbox is broken'); end`,
          );
        } else {
          await db.sql(
            `create function outbox_boom() returns trigger language plpgsql as $$ begin raise exception 'outbox is broken'; end $$`,
          );
          await db.sql(
            'create trigger outbox_boom before insert on outbox for each row execute function outbox_boom()',
          );
        }
        await assert.rejects(accept(store, '+15550100300', T0), /outbox is broken/);
        assert.equal(await count(db, 'auth_codes'), 0, 'the code was rolled back with its message');
      });
    });

    test('codes accepted for one phone at once (PostgreSQL: through two stores) never exceed the limit', async () => {
      const db = await target.fresh();
      const one = await openStore(db.url, { poolSize: 6 });
      // SQLite: one store per process (node:sqlite waits for a lock synchronously, so a second
      // store in this process would wait on the first forever); its one connection serialises.
      const two = target.name === 'SQLite' ? one : await openStore(db.url, { poolSize: 6 });
      try {
        const outcomes = await Promise.all(
          Array.from({ length: 16 }, (_, i) =>
            accept(i % 2 === 0 ? one : two, '+15550100400', minutes(i / 100), 5, `k${i}`),
          ),
        );
        assert.equal(outcomes.filter((o) => o.accepted).length, 5);
        assert.equal(await count(db, 'auth_codes'), 5);
        assert.equal(await count(db, 'outbox'), 5);
      } finally {
        await one.close();
        await two.close();
      }
    });
  });
}
