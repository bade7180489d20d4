/**
 * Retention with real processes, on both stores: `sis serve` prunes by itself as it starts (and
 * shows it in /metrics and one log line without codes or phones), refuses to start with a code
 * retention shorter than the hourly window; two `sis prune` at once share a backlog, each row
 * removed and counted once; and `sis prune` killed with SIGKILL in the middle of
 * a large backlog loses nothing that had to be kept, counts exactly what it removed, and a second
 * run finishes the job.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, describe, test } from 'node:test';
import { createPruneCommand } from '../../src/cli/prune-command.js';
import { openStore } from '../../src/store/open/open-store.js';
import { seedCodes, seedMessages } from '../helpers/retention-seed.js';
import { CLI_MAIN, childEnv, startServe, stopServe } from '../helpers/serve-process.js';
import { eventually } from '../helpers/sms-gateway.js';
import { cleanupTargets, storeTargets } from '../helpers/store-targets.js';
import type { FreshDatabase, StoreTarget } from '../helpers/store-targets.js';

after(() => cleanupTargets());

const DAY = 86_400_000;

async function count(db: FreshDatabase, query: string): Promise<number> {
  return Number((await db.sql(query))[0]!['n']);
}

const pruned = (db: FreshDatabase, table: string): Promise<number> =>
  count(db, `select coalesce(sum(pruned), 0) as n from pruned_rows where table_name = '${table}'`);

/** A migrated, empty database of `target`. */
async function migrated(target: StoreTarget): Promise<FreshDatabase> {
  const db = await target.fresh();
  await (await openStore(db.url)).close();
  return db;
}

for (const target of storeTargets) {
  describe(`retention across processes on ${target.name}`, { skip: target.skip ?? undefined }, () => {
    test('sis serve prunes as it starts, and says so in /metrics and its log', async () => {
      const db = await migrated(target);
      const old = new Date(Date.now() - 31 * DAY);
      await seedCodes(target, db, 30, old, 'old');
      await seedMessages(target, db, 10, old, 'failed', 'old');
      await seedMessages(target, db, 3, old, 'pending', 'waiting');
      await seedMessages(target, db, 2, new Date(Date.now() - DAY), 'delivered', 'legacy');
      const service = await startServe(db.url, { SIS_SHUTDOWN_GRACE_MS: '0' });
      try {
        const metrics = await eventually(async () => {
          const text = await (await fetch(`${service.url}/metrics`)).text();
          return /^sis_retention_rows\{table="outbox"\} 5$/m.test(text) ? text : undefined;
        });
        for (const line of [
          'sis_retention_pruned_rows_total{table="auth_codes"} 30',
          'sis_retention_pruned_rows_total{table="outbox"} 10',
          'sis_retention_rows{table="auth_codes"} 0',
        ]) {
          assert.ok(metrics.includes(`\n${line}\n`), line);
        }
        assert.equal(
          await count(db, "select count(*) as n from outbox where state = 'pending'"),
          3,
          'pending messages stay, however old',
        );
        assert.equal(
          await count(db, "select count(*) as n from outbox where message <> ''"),
          3,
          'only the pending ones hold a text',
        );
        // The log is buffered (up to half a second): wait for the line rather than expect it already.
        const logged = await eventually(() => service.logs.find((l) => l['msg'] === 'retention: old rows pruned'));
        assert.deepEqual([logged?.['authCodes'], logged?.['outbox'], logged?.['erased']], [30, 10, 2]);
      } finally {
        assert.equal(await stopServe(service), 0);
      }
      for (const line of service.lines)
        assert.ok(!/old-\d|legacy-\d|1555\d{5}/.test(line), `no code or phone in: ${line}`);
    });

    test(
      'two sis prune processes at once share the backlog: each row removed once, both finish',
      { timeout: 60_000 },
      async (t) => {
        const db = await migrated(target);
        const old = new Date(Date.now() - 40 * DAY);
        await seedCodes(target, db, 20_000, old, 'old');
        await seedMessages(target, db, 5_000, old, 'failed', 'old');
        await seedMessages(target, db, 300, old, 'pending', 'waiting');
        const run = (): Promise<{ code: number | null; out: string }> =>
          new Promise((resolve) => {
            const child = spawn(process.execPath, [CLI_MAIN, 'prune'], {
              env: childEnv(db.url),
              stdio: ['ignore', 'pipe', 'pipe'],
            });
            let out = '';
            child.stdout.on('data', (d: Buffer) => (out += d.toString()));
            child.stderr.on('data', (d: Buffer) => (out += d.toString()));
            child.once('exit', (code) => resolve({ code, out }));
          });
        const results = await Promise.all([run(), run()]);
        assert.deepEqual(
          results.map((r) => r.code),
          [0, 0],
          results.map((r) => r.out).join('\n'),
        );
        const removed = (table: string): number[] =>
          results.map((r) => Number(new RegExp(`^${table}\\t(\\d+) removed`, 'm').exec(r.out)?.[1]));
        assert.equal(removed('auth_codes')[0]! + removed('auth_codes')[1]!, 20_000, 'no code removed twice, none left');
        assert.equal(removed('outbox')[0]! + removed('outbox')[1]!, 5_000);
        assert.deepEqual([await pruned(db, 'auth_codes'), await pruned(db, 'outbox')], [20_000, 5_000]);
        assert.equal(await count(db, 'select count(*) as n from auth_codes'), 0);
        assert.equal(await count(db, "select count(*) as n from outbox where state = 'pending'"), 300);
        t.diagnostic(
          `codes removed by each: ${removed('auth_codes').join(' + ')}; messages: ${removed('outbox').join(' + ')}`,
        );
      },
    );

    test('a SIGKILL in the middle of sis prune loses nothing that had to be kept', { timeout: 60_000 }, async () => {
      const db = await migrated(target);
      const old = new Date(Date.now() - 40 * DAY);
      await seedCodes(target, db, 30_000, old, 'old');
      await seedCodes(target, db, 200, new Date(Date.now() - DAY), 'young');
      await seedMessages(target, db, 10_000, old, 'failed', 'old');
      await seedMessages(target, db, 500, old, 'pending', 'waiting');
      // 500 rows a batch and at least 10 ms between batches: about a second of work at least, killed once it has begun.
      const child = spawn(process.execPath, [CLI_MAIN, 'prune'], { env: childEnv(db.url), stdio: 'ignore' });
      const exited = new Promise<NodeJS.Signals | null>((resolve) =>
        child.once('exit', (_code, signal) => resolve(signal)),
      );
      await eventually(
        async () => ((await pruned(db, 'auth_codes')) > 0 ? true : undefined),
        20_000,
        'the first batch',
      );
      child.kill('SIGKILL');
      assert.equal(await exited, 'SIGKILL');

      const oldLeft = await count(db, "select count(*) as n from auth_codes where code like 'old-%'");
      assert.ok(oldLeft > 0, 'killed before the end');
      assert.equal(oldLeft + (await pruned(db, 'auth_codes')), 30_000, 'every removed code counted, no other');
      assert.equal(await count(db, "select count(*) as n from auth_codes where code like 'young-%'"), 200);
      assert.equal(
        (await count(db, "select count(*) as n from outbox where state = 'failed'")) + (await pruned(db, 'outbox')),
        10_000,
      );
      assert.equal(await count(db, "select count(*) as n from outbox where state = 'pending'"), 500);
      if (target.name === 'SQLite')
        assert.deepEqual(await db.sql('pragma integrity_check'), [{ integrity_check: 'ok' }]);

      let stdout = '';
      const output = {
        stdout: { write: (t: string) => (stdout += t) },
        stderr: { write: (t: string) => (stdout += t) },
      };
      assert.equal(await createPruneCommand(output).run([], { SIS_DATABASE_URL: db.url }), 0, stdout);
      assert.match(stdout, new RegExp(`^auth_codes\\t${oldLeft} removed\\t`));
      assert.equal(await count(db, 'select count(*) as n from auth_codes'), 200);
      assert.equal(await count(db, 'select count(*) as n from outbox'), 500);
      assert.deepEqual([await pruned(db, 'auth_codes'), await pruned(db, 'outbox')], [30_000, 10_000]);
    });
  });
}

describe('retention settings at start', () => {
  test('sis serve refuses a code retention shorter than the hourly window, saying why', async () => {
    const db = await storeTargets[0]!.fresh();
    await assert.rejects(
      startServe(db.url, { SIS_AUTH_CODE_RETENTION_MS: '600000' }),
      /exited with 78 before listening; stderr: sis serve: invalid configuration: SIS_AUTH_CODE_RETENTION_MS=600000: expected at least 3600000 \(one hour\) while SIS_AUTH_CODES_PER_HOUR is on/,
    );
  });
});
