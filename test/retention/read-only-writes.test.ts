/**
 * Retention and the `sis` commands that write, while PostgreSQL refuses writes as a demoted primary
 * does (25006 for every session: a private cluster made read-only, read-only-postgres.ts) and
 * then takes them again (issue 44): a pruning round's batches are tried again instead of failing
 * the round; each command is run again on new connections and ends done, within
 * SIS_COMMAND_RETRY_MS, and past it ends with its one line.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import type { Command } from '../../src/cli/command.js';
import { createDevicesCommand } from '../../src/cli/devices-command.js';
import { createImportCommand } from '../../src/cli/import-command.js';
import { createMigrateCommand } from '../../src/cli/migrate-command.js';
import { createOutboxCommand } from '../../src/cli/outbox-command.js';
import type { CommandOutput } from '../../src/cli/output.js';
import { createPruneCommand } from '../../src/cli/prune-command.js';
import { createSmsCommand } from '../../src/cli/sms-command.js';
import { createLogger } from '../../src/logging/logger.js';
import { DEFAULT_PRUNER_OPTIONS, Pruner } from '../../src/retention/pruner.js';
import { openStore } from '../../src/store/open/open-store.js';
import { PRIVATE_POSTGRES_SKIP, startPrivatePostgres } from '../helpers/private-postgres.js';
import type { PrivatePostgres } from '../helpers/private-postgres.js';
import { refuseWrites } from '../helpers/read-only-postgres.js';
import { seedCodes, seedMessages } from '../helpers/retention-seed.js';
import type { FreshDatabase } from '../helpers/store-targets.js';
import { postgresTarget } from '../helpers/store-targets.js';

const DAY = 86_400_000;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const dir = mkdtempSync(join(tmpdir(), 'sis-read-only-'));
let cluster: PrivatePostgres | null = null;
let schemas = 0;

before(async () => {
  if (PRIVATE_POSTGRES_SKIP === false) cluster = await startPrivatePostgres('sis');
});
after(() => {
  cluster?.remove();
  rmSync(dir, { recursive: true, force: true });
});

/** A migrated schema of the private cluster, with 5 codes and 3 delivered messages 40 days old, and 2 failed messages of now. */
async function seeded(): Promise<FreshDatabase & { schema: string }> {
  const schema = `read_only_${++schemas}`;
  const url = `${cluster!.url('sis')}?schema=${schema}`;
  await (await openStore(url, { poolSize: 1 })).close();
  const db: FreshDatabase & { schema: string } = {
    url,
    schema,
    async sql(text, params = []) {
      const client = new pg.Client({ connectionString: cluster!.url('sis') });
      await client.connect();
      try {
        await client.query(`set search_path to ${schema}`);
        return (await client.query(text, [...params])).rows as Record<string, unknown>[];
      } finally {
        await client.end();
      }
    },
  };
  const old = new Date(Date.now() - 40 * DAY);
  await seedCodes(postgresTarget, db, 5, old, 'old');
  await seedMessages(postgresTarget, db, 3, old, 'delivered', 'old');
  await seedMessages(postgresTarget, db, 2, new Date(), 'failed', 'new');
  return db;
}

interface Outcome {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

async function sis(
  make: (output: CommandOutput) => Command,
  args: readonly string[],
  env: Record<string, string>,
): Promise<Outcome> {
  let stdout = '';
  let stderr = '';
  const output: CommandOutput = {
    stdout: { write: (t: string) => (stdout += t) },
    stderr: { write: (t: string) => (stderr += t) },
  };
  const code = await make(output).run(args, env);
  return { code, stdout, stderr };
}

const count = async (db: FreshDatabase, sql: string): Promise<number> => Number((await db.sql(sql))[0]!['n']);

describe('writes refused by a read-only PostgreSQL, then taken again', { skip: PRIVATE_POSTGRES_SKIP }, () => {
  test('a pruning round: its batches are tried again, and the round ends with every old row removed', async () => {
    const db = await seeded();
    const store = await openStore(db.url, { poolSize: 2 });
    const lines: string[] = [];
    const log = createLogger('debug', {
      write: (line: string) => lines.push(line),
    } as unknown as NodeJS.WritableStream);
    const pruner = new Pruner(
      store.retention,
      { keepMs: { auth_codes: 30 * DAY, outbox: 30 * DAY }, authCodeFloorMs: 0 },
      log,
      { ...DEFAULT_PRUNER_OPTIONS, batchRows: 2, minPauseMs: 0 },
    );
    try {
      await refuseWrites(cluster!.url('sis'), true);
      const round = pruner.prune();
      round.catch(() => undefined); // read below, once writes are taken again
      await sleep(1500);
      await refuseWrites(cluster!.url('sis'), false);
      const report = await round;
      assert.equal(report.tables.auth_codes?.removed, 5);
      assert.equal(report.tables.outbox?.removed, 3);
      assert.equal(await count(db, 'select count(*) as n from auth_codes'), 0);
      assert.equal(await count(db, 'select count(*) as n from outbox'), 2, 'the failed messages of now are kept');
    } finally {
      await refuseWrites(cluster!.url('sis'), false);
      await store.close();
    }
  });

  test('the commands that write are run again on new connections and end done', async () => {
    const db = await seeded();
    const fresh = `${cluster!.url('sis')}?schema=read_only_fresh_${++schemas}`;
    const env = { SIS_DATABASE_URL: db.url };
    const file = join(dir, 'devices.json');
    writeFileSync(file, JSON.stringify({ devices: [{ id: 'imported-1', token: 'tok-imported' }] }));
    try {
      await refuseWrites(cluster!.url('sis'), true);
      const runs = {
        prune: sis(createPruneCommand, [], env),
        retry: sis(createOutboxCommand, ['retry', '--failed'], env),
        block: sis(createSmsCommand, ['block-range', '+1555019'], env),
        device: sis(createDevicesCommand, ['set', 'set-1', 'tok-set'], env),
        import: sis(createImportCommand, [file], env),
        migrate: sis(createMigrateCommand, [], { SIS_DATABASE_URL: fresh }),
      };
      await sleep(1500);
      await refuseWrites(cluster!.url('sis'), false);
      const outcomes = Object.fromEntries(
        await Promise.all(Object.entries(runs).map(async ([name, run]) => [name, await run] as const)),
      );
      for (const [name, outcome] of Object.entries(outcomes)) {
        assert.equal(outcome.code, 0, `${name}: ${outcome.stderr}`);
        assert.match(
          outcome.stderr,
          // The server's 25006 on a pooled connection, or a new connection found read-only (postgres-hosts.ts).
          /read-only.*; the database refuses writes or does not answer: trying again on new connections in \d+ ms/,
          name,
        );
      }
      assert.match(outcomes['prune']!.stdout, /^auth_codes\t5 removed\t/m);
      assert.match(outcomes['prune']!.stdout, /^outbox\t3 removed\t/m);
      assert.equal(outcomes['retry']!.stdout, '2 messages pending again\n');
      assert.equal(outcomes['block']!.stdout, '+1555019 blocked until allowed again\n');
      assert.match(outcomes['import']!.stdout, /^imported 0 students and 1 device into /);
      assert.match(outcomes['migrate']!.stdout, /: applied migrations 1, 2, /);
      assert.equal(await count(db, `select count(*) as n from outbox where state = 'pending'`), 2);
      assert.equal(await count(db, `select count(*) as n from sms_blocked_ranges where phone_range = '+1555019'`), 1);
      assert.equal(await count(db, `select count(*) as n from devices where id in ('set-1', 'imported-1')`), 2);
    } finally {
      await refuseWrites(cluster!.url('sis'), false);
    }
  });

  test('past SIS_COMMAND_RETRY_MS a command ends with its one line', async () => {
    const db = await seeded();
    try {
      await refuseWrites(cluster!.url('sis'), true);
      const outcome = await sis(createSmsCommand, ['block-range', '+1555018'], {
        SIS_DATABASE_URL: db.url,
        SIS_COMMAND_RETRY_MS: '1000',
      });
      assert.equal(outcome.code, 1);
      const lines = outcome.stderr.trimEnd().split('\n');
      assert.ok(lines.length >= 2, outcome.stderr);
      assert.match(
        lines.at(-1)!,
        /^sis sms: postgres:\/\/.*: (cannot execute INSERT in a read-only transaction|the database server at \S+ is read-only .*)$/,
      );
      assert.equal(await count(db, `select count(*) as n from sms_blocked_ranges`), 0);
    } finally {
      await refuseWrites(cluster!.url('sis'), false);
    }
  });
});
