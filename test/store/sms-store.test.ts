/**
 * The SMS protection's store, on both stores: a dry run checks without writing, counters refuse
 * past their limit and keep nothing of a refused code, the growing wait per phone, blocked
 * ranges, refusal counts, and the sweep that forgets ended windows.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { AuthCodeRequest, CounterLimit } from '../../src/store/store.js';
import { cleanupTargets, storeTargets, withFreshStore } from '../helpers/store-targets.js';

after(() => cleanupTargets());

const AT = new Date('2030-01-01T10:30:00Z');
const minutes = (n: number): Date => new Date(AT.getTime() + n * 60_000);
const counter = (limit: number): CounterLimit => ({
  key: 'r:+96650123:h1',
  limit,
  until: new Date('2030-01-01T11:00:00Z'),
  reason: 'range',
});
const request = (phone: string, at: Date, extra: Partial<AuthCodeRequest> = {}): AuthCodeRequest => ({
  code: '1234',
  phone,
  at,
  message: 'm',
  maxPerHour: 2,
  ...extra,
});

for (const target of storeTargets) {
  describe(`SMS protection store on ${target.name}`, { skip: target.skip ?? false }, () => {
    it('counts in counters, refuses past the limit keeping nothing; a dry run writes nothing', async () => {
      await withFreshStore(target, async (store, db) => {
        const counters = [counter(2)];
        const dry = await store.acceptAuthCode(request('+966501230001', AT, { counters, dryRun: true }));
        assert.deepEqual(dry, { accepted: true });
        assert.equal((await db.sql('select * from auth_codes')).length, 0, 'a dry run writes nothing');
        for (const phone of ['+966501230001', '+966501230002'])
          assert.deepEqual(await store.acceptAuthCode(request(phone, AT, { counters, country: 'SA' })), {
            accepted: true,
          });
        // The refusal names the full counter (Redis is told to hold it full: sms-guard.ts).
        const refused = { accepted: false, reason: 'range', retryAfterSeconds: 1800, counter: counters[0]!.key };
        assert.deepEqual(await store.acceptAuthCode(request('+966501230003', AT, { counters })), refused);
        assert.deepEqual(await store.acceptAuthCode(request('+966501230003', AT, { counters, dryRun: true })), refused);
        // Redis had room (it came back empty): the transaction still counts, and refuses past the limit.
        assert.deepEqual(
          await store.acceptAuthCode(request('+966501230004', AT, { counters, countersChecked: true })),
          refused,
        );
        assert.equal((await db.sql('select * from outbox')).length, 2);
        assert.deepEqual(
          (await db.sql('select hits from sms_counters')).map((r) => Number(r.hits)),
          [2],
        );
        await store.sms.sweepSms(new Date('2030-01-01T11:00:00Z'));
        assert.deepEqual(await db.sql('select * from sms_counters'), [], 'forgotten when its window ended');
      });
    });

    it('makes a phone wait longer after each code beyond its hourly limit, its refused ones included', async () => {
      await withFreshStore(target, async (store) => {
        const phone = '+966501239999';
        const ask = (at: Date): Promise<unknown> => store.acceptAuthCode(request(phone, at, { backoff: true }));
        assert.deepEqual(await ask(minutes(0)), { accepted: true });
        assert.deepEqual(await ask(minutes(0)), { accepted: true });
        // Two in the hour: the hourly limit, then, once it frees, a wait of at least a minute after the last.
        assert.equal(((await ask(minutes(30))) as { reason: string }).reason, 'phone-hourly');
        assert.deepEqual(await ask(minutes(61)), { accepted: true });
        const waited = (await ask(minutes(62))) as { reason: string; retryAfterSeconds: number };
        assert.equal(waited.reason, 'phone-backoff');
        // Three codes and the refused one of minute 30 (a refusal counts against the phone): 4 minutes and up to a quarter, from minute 61.
        assert.ok(waited.retryAfterSeconds > 180 && waited.retryAfterSeconds <= 240, String(waited.retryAfterSeconds));
      });
    });

    it('keeps blocked ranges and refusal counts for every instance and `sis outbox stats`', async () => {
      await withFreshStore(target, async (store) => {
        await store.sms.blockRange('+96650123', new Date('2030-01-02T00:00:00Z'), AT);
        await store.sms.blockRange('+96650999', null, AT);
        assert.deepEqual(
          (await store.sms.blockedRanges(AT)).map((b) => [b.range, b.until?.toISOString() ?? null]),
          [
            ['+96650123', '2030-01-02T00:00:00.000Z'],
            ['+96650999', null],
          ],
        );
        assert.equal(await store.sms.allowRange('+96650999'), true);
        assert.equal(await store.sms.allowRange('+96650999'), false);
        const row = {
          periodStart: new Date('2030-01-01T10:30:00Z'),
          reason: 'range',
          country: 'SA',
          range: '+96650123',
        };
        await store.sms.addSmsRefusals([{ ...row, refused: 3 }]);
        await store.sms.addSmsRefusals([{ ...row, refused: 4 }]);
        const stats = await store.sms.smsStats(minutes(5), 5);
        assert.deepEqual([...stats.refusedHour], [['range', 7]]);
        assert.deepEqual(stats.rangesDay, [['+96650123', 7]]);
        assert.deepEqual(stats.countriesHour, [['SA', 7]]);
      });
    });
  });
}
