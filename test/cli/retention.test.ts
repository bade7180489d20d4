/**
 * The retention settings as the service reads them (defaults, 0, the refusal of a retention shorter
 * than the hourly window while the limit is on), and `sis prune` on both stores: a dry run, a prune
 * by the configured retentions and by --older-than, its usage errors; `sis outbox stats` counting
 * the rows kept and pruned.
 */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { createOutboxCommand } from '../../src/cli/outbox-command.js';
import type { CommandOutput } from '../../src/cli/output.js';
import { createPruneCommand, parseDuration } from '../../src/cli/prune-command.js';
import { ConfigError, loadConfig } from '../../src/config/config.js';
import { openStore } from '../../src/store/open/open-store.js';
import { seedCodes, seedMessages } from '../helpers/retention-seed.js';
import { cleanupTargets, storeTargets } from '../helpers/store-targets.js';

after(() => cleanupTargets());

const DAY = 86_400_000;

interface Outcome {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

async function run(
  command: 'prune' | 'outbox',
  args: readonly string[],
  env: Record<string, string>,
): Promise<Outcome> {
  let stdout = '';
  let stderr = '';
  const output: CommandOutput = {
    stdout: { write: (t: string) => (stdout += t) },
    stderr: { write: (t: string) => (stderr += t) },
  };
  const code = await (command === 'prune' ? createPruneCommand(output) : createOutboxCommand(output)).run(args, env);
  return { code, stdout, stderr };
}

function problems(env: Record<string, string>): readonly string[] {
  try {
    loadConfig(env);
    return [];
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
}

describe('retention settings', () => {
  test('30 days by default, 0 keeps forever; a code retention under the hourly window is refused while the limit is on', () => {
    assert.deepEqual(loadConfig({}).retention, { authCodesMs: 30 * DAY, outboxMs: 30 * DAY });
    assert.deepEqual(loadConfig({ SIS_AUTH_CODE_RETENTION_MS: '0', SIS_OUTBOX_RETENTION_MS: '0' }).retention, {
      authCodesMs: 0,
      outboxMs: 0,
    });
    assert.equal(
      loadConfig({ SIS_AUTH_CODE_RETENTION_MS: '3600000' }).retention.authCodesMs,
      3_600_000,
      'exactly the hour is enough',
    );
    assert.deepEqual(problems({ SIS_AUTH_CODE_RETENTION_MS: '600000' }), [
      'SIS_AUTH_CODE_RETENTION_MS=600000: expected at least 3600000 (one hour) while SIS_AUTH_CODES_PER_HOUR is on, or the hourly limit would forget codes it must count; use 0 to keep codes forever, or set SIS_AUTH_CODES_PER_HOUR=0',
    ]);
    assert.equal(
      loadConfig({ SIS_AUTH_CODE_RETENTION_MS: '600000', SIS_AUTH_CODES_PER_HOUR: '0' }).retention.authCodesMs,
      600_000,
      'no limit, no floor',
    );
    assert.deepEqual(problems({ SIS_OUTBOX_RETENTION_MS: '30d' }), [
      'SIS_OUTBOX_RETENTION_MS="30d": expected a whole number from 0 to 315360000000',
    ]);
  });

  test('durations for --older-than', () => {
    assert.deepEqual(['30d', '12h', '90m', '90s', '500ms', '0s'].map(parseDuration), [
      30 * DAY,
      12 * 3_600_000,
      90 * 60_000,
      90_000,
      500,
      0,
    ]);
    for (const bad of ['30', '1w', '-1d', '30 d', 'd', '1.5h', '36501d', ''])
      assert.equal(parseDuration(bad), null, bad);
  });
});

for (const target of storeTargets) {
  describe(`sis prune on ${target.name}`, { skip: target.skip ?? undefined }, () => {
    test('dry run, then the configured retentions, then --older-than; stats count what is kept and pruned', async () => {
      const db = await target.fresh();
      const env = { SIS_DATABASE_URL: db.url };
      await (await openStore(db.url)).close();
      const now = Date.now();
      await seedCodes(target, db, 40, new Date(now - 45 * DAY), 'old');
      await seedCodes(target, db, 10, new Date(now - 2 * DAY), 'recent');
      await seedCodes(target, db, 3, new Date(now - 60_000), 'fresh');
      await seedMessages(target, db, 20, new Date(now - 45 * DAY), 'failed', 'old');
      await seedMessages(target, db, 5, new Date(now - 45 * DAY), 'pending', 'waiting');
      await seedMessages(target, db, 4, new Date(now - 2 * DAY), 'delivered', 'legacy');

      const cut = String.raw`\(created before \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z`;
      const dry = await run('prune', ['--dry-run'], env);
      assert.equal(dry.code, 0, dry.stderr);
      assert.match(
        dry.stdout,
        new RegExp(
          `^auth_codes\\t40 to remove\\t${cut}\\)\\noutbox\\t20 to remove\\t${cut}; delivered and failed only\\)\\noutbox\\t4 texts to erase\\t\\(delivered messages stored before texts were erased at delivery\\)\\n$`,
        ),
      );
      const pruned = await run('prune', [], env);
      assert.deepEqual([pruned.code, pruned.stderr], [0, '']);
      assert.match(pruned.stdout, /^auth_codes\t40 removed\t.*\noutbox\t20 removed\t.*\noutbox\t4 texts erased\t/);
      const before = new Date(/created before (\S+)\)/.exec(pruned.stdout)![1]!).getTime();
      assert.ok(Math.abs(before - (now - 30 * DAY)) < 60_000, 'the cut-off is 30 days back');
      assert.match((await run('prune', [], env)).stdout, /^auth_codes\t0 removed\t.*\noutbox\t0 removed\t[^\n]*\n$/);

      // Everything but pending messages, and the codes of the last hour (the limit counts them).
      const all = await run('prune', ['--older-than', '0s'], env);
      assert.match(
        all.stdout,
        /^auth_codes\t10 removed\t\(created before \S+; the last hour kept: SIS_AUTH_CODES_PER_HOUR counts it\)\noutbox\t4 removed\t/,
      );
      assert.deepEqual(await run('outbox', ['stats'], env), {
        code: 0,
        stdout:
          'pending\t5\ndelivered\t0\nfailed\t0\noutbox_kept\t5\noutbox_pruned\t24\nauth_codes_kept\t3\nauth_codes_pruned\t50\n',
        stderr: '',
      });
      const off = await run('prune', ['--older-than=0s'], {
        ...env,
        SIS_AUTH_CODES_PER_HOUR: '0',
        SIS_OUTBOX_RETENTION_MS: '0',
      });
      assert.match(off.stdout, /^auth_codes\t3 removed\t[^;]*\)\noutbox\t0 removed/);
      assert.match(
        (await run('prune', [], { ...env, SIS_AUTH_CODE_RETENTION_MS: '0', SIS_OUTBOX_RETENTION_MS: '0' })).stdout,
        /^auth_codes\tkept forever \(SIS_AUTH_CODE_RETENTION_MS=0\)\noutbox\tkept forever \(SIS_OUTBOX_RETENTION_MS=0\)\n$/,
      );
    });

    test('usage errors exit 2, a wrong setting or an unmigrated database 1', async () => {
      const db = await target.fresh();
      const env = { SIS_DATABASE_URL: db.url };
      for (const [args, message] of [
        [
          ['--older-than', '30'],
          '--older-than must be a whole number and a unit (ms, s, m, h, d) up to 36500d, such as 30d or 0s; not "30"',
        ],
        [['--older-than'], '--older-than needs a value'],
        [['--dry-run=yes'], '--dry-run takes no value'],
        [['now'], 'unexpected argument "now"'],
        [['--force'], 'unknown option --force'],
      ] as const) {
        const result = await run('prune', args, env);
        assert.equal(result.code, 2, args.join(' '));
        assert.ok(result.stderr.startsWith(`sis prune: ${message}\n\nUsage: sis prune`), result.stderr);
      }
      const refused = await run('prune', [], { ...env, SIS_AUTH_CODE_RETENTION_MS: '60000' });
      assert.equal(refused.code, 1);
      assert.match(
        refused.stderr,
        /^sis prune: Invalid configuration:\n {2}- SIS_AUTH_CODE_RETENTION_MS=60000: expected at least 3600000/,
      );
      const unmigrated = await run('prune', [], env);
      assert.equal(unmigrated.code, 1);
      assert.match(unmigrated.stderr, /run `sis migrate` \(or start the service\) first\n$/);
    });
  });
}
