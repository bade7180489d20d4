/**
 * `sis outbox` on both stores: list (newest first, filtered by state), stats and retry, with the
 * codes never printed and phones masked; usage errors; a database never migrated is refused.
 */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { createOutboxCommand } from '../../src/cli/outbox-command.js';
import type { CommandOutput } from '../../src/cli/output.js';
import { openStore } from '../../src/store/open/open-store.js';
import { cleanupTargets, storeTargets } from '../helpers/store-targets.js';

after(() => cleanupTargets());

async function outbox(args: readonly string[], url: string): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const output: CommandOutput = {
    stdout: { write: (t: string) => (stdout += t) },
    stderr: { write: (t: string) => (stderr += t) },
  };
  const code = await createOutboxCommand(output).run(args, { SIS_DATABASE_URL: url });
  return { code, stdout, stderr };
}

const T0 = new Date('2030-01-01T00:00:00.000Z');
const HEADER =
  'id\tstate\tattempts\tphone\tcode\tcreated_at\tnext_attempt_at\tdelivered_at\tlast_error\treceipt\treceipt_reason\tgateway\trefusal\n';

for (const target of storeTargets) {
  describe(`sis outbox on ${target.name}`, { skip: target.skip ?? undefined }, () => {
    test('list, stats and retry; codes never shown, phones masked', async () => {
      const db = await target.fresh();
      const store = await openStore(db.url);
      try {
        for (const [i, code] of ['SECRET-A', 'SECRET-B', 'SECRET-C'].entries()) {
          await store.acceptAuthCode({
            code,
            phone: `+1555030000${i}`,
            at: T0,
            message: `Your code is ${code}`,
            maxPerHour: 0,
          });
        }
        const [a, b] = await store.claimOutbox('w', T0, 1000, 2);
        await store.finishOutbox(a!.id, 'w', {
          state: 'delivered',
          at: new Date(T0.getTime() + 500),
          gateway: 'twilio',
          gatewayMessageId: 'SM1',
        });
        await store.finishOutbox(b!.id, 'w', { state: 'failed', error: 'gateway answered 400\nBad\trequest' });
      } finally {
        await store.close();
      }

      const listed = await outbox([], db.url);
      assert.equal(listed.code, 0, listed.stderr);
      assert.equal(
        listed.stdout,
        HEADER +
          `3\tpending\t0\t+*********02\t***\t2030-01-01T00:00:00.000Z\t2030-01-01T00:00:00.000Z\t\t\t\t\t\t\n` +
          `2\tfailed\t1\t+*********01\t***\t2030-01-01T00:00:00.000Z\t\t\tgateway answered 400 Bad request\t\t\t\t\n` +
          `1\tdelivered\t1\t+*********00\t***\t2030-01-01T00:00:00.000Z\t\t2030-01-01T00:00:00.500Z\t\t\t\ttwilio\t\n`,
      );
      assert.doesNotMatch(listed.stdout, /SECRET|555030/);
      assert.equal((await outbox(['list', '--state', 'failed'], db.url)).stdout.split('\n')[1]!.split('\t')[0], '2');
      assert.equal(
        (await outbox(['list', '--limit', '1'], db.url)).stdout.split('\n').length,
        3,
        'the header, one line and the last newline',
      );
      const kept = 'outbox_kept\t3\noutbox_pruned\t0\nauth_codes_kept\t3\nauth_codes_pruned\t0\n';
      // The messages each gateway took (issue 36): the delivered one, by twilio.
      const sent = 'gateway_hour:twilio\t1\ngateway_day:twilio\t1\n';
      const sms = 'range_hour:+1555030\t3\ncountry_hour:unknown\t3\nrange_day:+1555030\t3\ncountry_day:unknown\t3\n';
      assert.deepEqual(await outbox(['stats'], db.url), {
        code: 0,
        // Then AuthCode's protection: no refusals; the codes asked by range and country (none known: no metadata read).
        stdout: `pending\t1\ndelivered\t1\nfailed\t1\n${kept}${sms}${sent}`,
        stderr: '',
      });

      assert.deepEqual(await outbox(['retry', '1', '3'], db.url), {
        code: 0,
        stdout: '0 of 2 messages pending again (only failed messages are retried)\n',
        stderr: '',
      });
      assert.deepEqual(await outbox(['retry', '--failed'], db.url), {
        code: 0,
        stdout: '1 message pending again\n',
        stderr: '',
      });
      assert.deepEqual(
        (await outbox(['stats'], db.url)).stdout,
        `pending\t2\ndelivered\t1\nfailed\t0\n${kept}${sms}${sent}`,
      );
      assert.match((await outbox(['list', '--state', 'pending'], db.url)).stdout, /\n2\tpending\t0\t/);
    });

    test('usage errors exit 2; a database never migrated is refused', async () => {
      const db = await target.fresh();
      for (const [args, message] of [
        [['retry'], 'name the messages to retry by id, or use --failed for every failed one'],
        [['retry', '1', '--failed'], 'give message ids or --failed, not both'],
        [['retry', 'x1'], 'not a message id: "x1"'],
        [['list', '--failed'], '--failed is not an option of "outbox list"'],
        [['list', '--limit', '0'], '--limit must be a whole number from 1 to 1000000, not "0"'],
        [['stats', 'now'], 'unexpected argument "now"'],
        [['purge'], 'unknown action "purge"; expected list, retry or stats'],
        [['list', '--state', 'lost'], '--state must be pending or delivered or failed, not "lost"'],
      ] as const) {
        const result = await outbox(args, db.url);
        assert.equal(result.code, 2, args.join(' '));
        assert.ok(result.stderr.startsWith(`sis outbox: ${message}\n`), result.stderr);
      }
      const unmigrated = await outbox(['stats'], db.url);
      assert.equal(unmigrated.code, 1);
      assert.match(unmigrated.stderr, /run `sis migrate` \(or start the service\) first\n$/);
    });
  });
}
