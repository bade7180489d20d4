/**
 * The SMS outbox on both stores: claims under a lease (taken once, taken again when the lease
 * runs out, finished only by the lease holder), and the delivery worker against a real local
 * gateway: signed bodies, a failing gateway retried with back-off until it answers, a gateway
 * that never does ending in `failed` after the last attempt, and `retryOutbox` starting over.
 */
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { after, describe, test } from 'node:test';
import { createLogger } from '../../src/logging/logger.js';
import { webhookGateway } from '../../src/outbox/gateways/webhook-gateway.js';
import { OutboxWorker } from '../../src/outbox/outbox-worker.js';
import type { OutboxWorkerOptions } from '../../src/outbox/outbox-worker.js';
import { signature } from '../../src/outbox/webhook.js';
import { openStore } from '../../src/store/open/open-store.js';
import type { SqlStore } from '../../src/store/sql/sql-store.js';
import { eventually, startSmsGateway } from '../helpers/sms-gateway.js';
import { cleanupTargets, storeTargets, withFreshStore } from '../helpers/store-targets.js';

const SECRET = 'test-secret-0123456789-0123456789';
const T0 = new Date('2030-01-02T03:04:05.000Z');
const at = (ms: number): Date => new Date(T0.getTime() + ms);
const silent = createLogger('silent');

const FAST: OutboxWorkerOptions = { pollMs: 20, leaseMs: 5000, maxAttempts: 3, backoffMs: () => 10, batch: 20 };

async function accept(store: SqlStore, phone: string, code: string, when = T0): Promise<void> {
  const outcome = await store.acceptAuthCode({ code, phone, at: when, message: `code ${code}`, maxPerHour: 0 });
  assert.deepEqual(outcome, { accepted: true });
}

after(() => cleanupTargets());

for (const target of storeTargets) {
  describe(`outbox on ${target.name}`, { skip: target.skip ?? undefined }, () => {
    test('an accepted code is stored and its message queued, pending and due at once', async () => {
      await withFreshStore(target, async (store, db) => {
        await accept(store, '+15550001111', '4242');
        const codes = await db.sql('select code, phone from auth_codes');
        assert.deepEqual(codes, [{ code: '4242', phone: '+15550001111' }]);
        const [message] = await store.listOutbox({});
        assert.ok(message);
        assert.equal(message.state, 'pending');
        assert.equal(message.attempts, 0);
        assert.equal(message.message, 'code 4242');
        assert.equal(message.nextAttemptAt.getTime(), T0.getTime());
        assert.equal(message.createdAt.getTime(), T0.getTime());
        assert.equal(message.deliveredAt, null);
        assert.deepEqual(await store.outboxCounts(), { pending: 1, delivered: 0, failed: 0 });
      });
    });

    test('the backlog: pending messages and when the oldest was accepted, for /metrics', async () => {
      await withFreshStore(target, async (store) => {
        assert.deepEqual(await store.outboxBacklog(), { pending: 0, oldestPendingAt: null });
        await accept(store, '+15550000001', 'c1');
        await accept(store, '+15550000002', 'c2', at(60_000));
        await accept(store, '+15550000003', 'c3', at(120_000));
        assert.deepEqual(await store.outboxBacklog(), { pending: 3, oldestPendingAt: T0 });
        const [first, second] = await store.claimOutbox('w1', at(130_000), 1000, 2);
        await store.finishOutbox(first!.id, 'w1', { state: 'delivered', at: at(130_000) });
        await store.finishOutbox(second!.id, 'w1', { state: 'failed', error: 'gateway answered 400' });
        assert.deepEqual(await store.outboxBacklog(), { pending: 1, oldestPendingAt: at(120_000) });
      });
    });

    test('claims: each due message once, again once its lease ran out, finished only by the lease holder', async () => {
      await withFreshStore(target, async (store) => {
        for (const n of [1, 2, 3]) await accept(store, `+1555000000${n}`, `c${n}`);
        const first = await store.claimOutbox('w1', T0, 1000, 2);
        assert.deepEqual(
          first.map((m) => [m.code, m.attempts]),
          [
            ['c1', 1],
            ['c2', 1],
          ],
        );
        assert.deepEqual(
          (await store.claimOutbox('w2', at(10), 1000, 10)).map((m) => m.code),
          ['c3'],
        );
        assert.deepEqual(await store.claimOutbox('w3', at(20), 1000, 10), [], 'every message is leased');
        assert.deepEqual(await store.claimOutbox('w3', at(-1), 1000, 10), [], 'nothing is due before its time');

        // The leases ran out (w1 and w2 died, say): w3 takes their messages, a second attempt each.
        const again = await store.claimOutbox('w3', at(1500), 1000, 10);
        assert.deepEqual(
          again.map((m) => [m.code, m.attempts]),
          [
            ['c1', 2],
            ['c2', 2],
            ['c3', 2],
          ],
        );
        const c1 = again[0]!.id;
        await store.finishOutbox(c1, 'w1', { state: 'delivered', at: at(1600) });
        assert.equal((await store.listOutbox({ state: 'delivered' })).length, 0, 'a lost lease cannot finish');
        await store.finishOutbox(c1, 'w3', { state: 'delivered', at: at(1600) });
        const delivered = await store.listOutbox({ state: 'delivered' });
        // Delivered: the code and text are erased at once (retention.test.ts has the rest).
        assert.deepEqual(
          delivered.map((m) => [m.id, m.code, m.message, m.deliveredAt?.getTime()]),
          [[c1, '', '', at(1600).getTime()]],
        );

        // Back-off: pending again, due later; released at once.
        await store.finishOutbox(again[1]!.id, 'w3', {
          state: 'pending',
          nextAttemptAt: at(5000),
          error: 'gateway answered 503',
        });
        await store.finishOutbox(again[2]!.id, 'w3', { state: 'failed', error: 'gateway answered 400' });
        assert.deepEqual(await store.claimOutbox('w4', at(4999), 1000, 10), []);
        const due = await store.claimOutbox('w4', at(5000), 1000, 10);
        assert.deepEqual(
          due.map((m) => [m.code, m.attempts, m.lastError]),
          [['c2', 3, 'gateway answered 503']],
        );
        assert.deepEqual(await store.outboxCounts(), { pending: 1, delivered: 1, failed: 1 });

        const failed = await store.listOutbox({ state: 'failed' });
        assert.deepEqual(
          failed.map((m) => [m.code, m.lastError]),
          [['c3', 'gateway answered 400']],
        );
        assert.equal(
          await store.retryOutbox([c1, failed[0]!.id, 999], at(6000)),
          1,
          'only failed messages are retried',
        );
        const retried = await store.claimOutbox('w5', at(6000), 1000, 10);
        assert.deepEqual(
          retried.map((m) => [m.code, m.attempts]),
          [['c3', 1]],
          'a full round of attempts again',
        );
        assert.equal(await store.retryOutbox('failed', at(7000)), 0);
      });
    });

    test('an outcome written again (its first answer lost) finds the row holding it; never over another lease', async () => {
      await withFreshStore(target, async (store) => {
        for (const n of [1, 2, 3]) await accept(store, `+1555000001${n}`, `r${n}`);
        const [a, b, c] = await store.claimOutbox('w1', T0, 1000, 3);
        const delivered = { state: 'delivered', at: at(100), gateway: 'webhook', gatewayMessageId: 'gw-1' } as const;
        assert.equal(await store.finishOutbox(a!.id, 'w1', delivered), true);
        assert.equal(await store.finishOutbox(a!.id, 'w1', delivered), true, 'the same outcome again: it holds it');
        assert.equal(
          await store.finishOutbox(a!.id, 'w1', { ...delivered, at: at(200) }),
          false,
          'another outcome: not over the one written',
        );
        const retry = { state: 'pending', nextAttemptAt: at(5000), error: 'gateway answered 503' } as const;
        assert.equal(await store.finishOutbox(b!.id, 'w1', retry), true);
        assert.equal(await store.finishOutbox(b!.id, 'w1', retry), true);
        const failed = { state: 'failed', error: 'gateway answered 400' } as const;
        assert.equal(await store.finishOutbox(c!.id, 'w1', failed), true);
        assert.equal(await store.finishOutbox(c!.id, 'w1', failed), true);

        // The lease ran out and w2 took the message: w1's outcome is not written over w2's lease.
        const [again] = await store.claimOutbox('w2', at(5000), 1000, 10);
        assert.equal(again!.id, b!.id);
        assert.equal(await store.finishOutbox(b!.id, 'w1', retry), false);
        assert.equal(await store.finishOutbox(b!.id, 'w1', { ...delivered, at: at(5100) }), false);
        assert.deepEqual(
          (await store.listOutbox({})).map((m) => [m.id, m.state, m.deliveredAt?.getTime() ?? null]),
          [
            [c!.id, 'failed', null],
            [b!.id, 'pending', null],
            [a!.id, 'delivered', at(100).getTime()],
          ],
        );
      });
    });

    test('the worker signs and delivers; a gateway answering 500 is retried until it answers 200', async () => {
      await withFreshStore(target, async (store) => {
        const gateway = await startSmsGateway(SECRET, (n) => (n < 2 ? 500 : 200));
        const worker = new OutboxWorker(
          store,
          [
            webhookGateway({
              url: gateway.url,
              secret: SECRET,
              timeoutMs: 2000,
              receiptPath: null,
              receiptSecret: SECRET,
            }),
          ],
          silent,
          FAST,
        );
        try {
          await accept(store, '+15550002222', 'retry-me', new Date());
          worker.start();
          const [sms] = await gateway.delivered(1);
          assert.deepEqual(
            gateway.received.map((r) => r.status),
            [500, 500, 200],
          );
          assert.ok(
            gateway.received.every((r) => r.signed),
            'every request carries a valid X-Signature-256',
          );
          assert.equal(sms!.contentType, 'application/json');
          assert.deepEqual([sms!.phone, sms!.code, sms!.message], ['+15550002222', 'retry-me', 'code retry-me']);
          const message = await eventually(async () => (await store.listOutbox({ state: 'delivered' }))[0]);
          assert.equal(message.attempts, 3);
          assert.equal(sms!.messageId, String(message.id));
          assert.equal(message.lastError, 'gateway answered 500', 'the last failure is kept');
        } finally {
          await worker.stop();
          await gateway.close();
        }
      });
    });

    test('a gateway that always fails: failed after the last attempt, then retried on request', async () => {
      await withFreshStore(target, async (store) => {
        let down = true;
        const gateway = await startSmsGateway(SECRET, () => (down ? 500 : 200));
        const worker = new OutboxWorker(
          store,
          [
            webhookGateway({
              url: gateway.url,
              secret: SECRET,
              timeoutMs: 2000,
              receiptPath: null,
              receiptSecret: SECRET,
            }),
          ],
          silent,
          FAST,
        );
        try {
          await accept(store, '+15550003333', 'never', new Date());
          worker.start();
          const failed = await eventually(async () => (await store.listOutbox({ state: 'failed' }))[0]);
          assert.equal(failed.attempts, FAST.maxAttempts);
          assert.equal(failed.lastError, 'gateway answered 500');
          assert.equal(gateway.received.length, FAST.maxAttempts);
          down = false;
          assert.equal(await store.retryOutbox('failed', new Date()), 1);
          worker.wake();
          await gateway.delivered(1);
          await eventually(async () => (await store.listOutbox({ state: 'delivered' }))[0]);
          assert.equal(gateway.received.length, FAST.maxAttempts + 1);
        } finally {
          await worker.stop();
          await gateway.close();
        }
      });
    });

    if (target.name === 'PostgreSQL') {
      test('two stores claiming at once never take the same message', async () => {
        const db = await target.fresh();
        const one = await openStore(db.url, { poolSize: 4 });
        const two = await openStore(db.url, { poolSize: 4 });
        try {
          for (let i = 0; i < 60; i++) await accept(one, `+1555100${String(i).padStart(4, '0')}`, `k${i}`);
          const rounds = await Promise.all(
            Array.from({ length: 12 }, (_, i) => (i % 2 === 0 ? one : two).claimOutbox(`w${i}`, at(1), 60_000, 7)),
          );
          const ids = rounds.flat().map((m) => m.id);
          assert.equal(new Set(ids).size, ids.length, 'no message claimed twice');
          assert.equal(ids.length, 60, 'every message claimed by someone');
        } finally {
          await one.close();
          await two.close();
        }
      });
    }
  });
}

test('signature(): sha256= and the hex HMAC of the raw body', () => {
  // RFC 4231 test case 2: key "Jefe", data "what do ya want for nothing?".
  assert.equal(
    signature('Jefe', 'what do ya want for nothing?'),
    'sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843',
  );
});

test('signature(): of the bytes as they came, never decoded first (a body that is not UTF-8)', () => {
  const body = Buffer.alloc(50, 0xdd); // RFC 4231 test case 3's data: no valid UTF-8 in it
  const raw = createHmac('sha256', 'Jefe').update(body).digest('hex');
  assert.equal(signature('Jefe', body), `sha256=${raw}`);
});
