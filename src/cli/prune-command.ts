/**
 * `sis prune`: what the service's pruner does every minute, on demand: removes accepted codes and
 * delivered or failed messages older than the configured retentions (or `--older-than`), in the
 * same small batches, and says what it removed per table.
 */
import { ConfigError, loadConfig } from '../config/config.js';
import type { Config } from '../config/config.js';
import { DEFAULT_PRUNER_OPTIONS, Pruner, retentionPolicy } from '../retention/pruner.js';
import type { PruneReport, TablePrune } from '../retention/pruner.js';
import { AUTH_CODE_WINDOW_MS } from '../store/auth-code-window.js';
import type { RetentionTable } from '../store/retention-types.js';
import { optionValue } from './args.js';
import { withCommandStore } from './cli-store.js';
import { defineCommand } from './command.js';
import type { Command } from './command.js';
import { processOutput, writeText } from './output.js';
import type { CommandOutput } from './output.js';

const USAGE = `Usage: sis prune [--older-than DURATION] [--dry-run]

Removes from the database named by SIS_DATABASE_URL what has outlived its retention, as every
running service process does by itself each minute:

  auth_codes  accepted codes created longer ago than SIS_AUTH_CODE_RETENTION_MS
  outbox      delivered and failed messages created longer ago than SIS_OUTBOX_RETENTION_MS;
              pending messages are never removed, whatever their age

and erases the text of delivered messages still holding it (stored before texts were erased at
delivery). A retention of 0 keeps that table forever. Work goes in small batches, each its own
short transaction, so it is safe while the service runs, and from several places at once.
Prints one line per table: rows removed, and the cut-off.

Options:
  --older-than DURATION  instead of the configured retentions, for both tables: 30d, 12h, 90m,
                         90s, 500ms or 0s (everything but pending messages). While
                         SIS_AUTH_CODES_PER_HOUR is on, codes of the last hour are kept anyway:
                         the limit counts them.
  --dry-run              count what would be removed and erased; change nothing
  -h, --help             show this help

Exit status: 0 done, 1 configuration or database error, 2 usage error.
`;

const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const MAX_DURATION_MS = 36_500 * UNIT_MS['d']!;

/** `30d`, `12h`, `90m`, `90s`, `500ms`, `0s` in milliseconds, or null. */
export function parseDuration(text: string): number | null {
  const m = /^(\d{1,15})(ms|s|m|h|d)$/.exec(text);
  if (m === null) return null;
  const ms = Number(m[1]) * UNIT_MS[m[2]!]!;
  return ms <= MAX_DURATION_MS ? ms : null;
}

const SPECS = [{ name: 'older-than', value: true }, { name: 'dry-run' }] as const;

export function createPruneCommand(output: CommandOutput = processOutput): Command {
  return defineCommand(
    {
      name: 'prune',
      summary: 'remove codes and finished SMS messages older than their retention',
      usage: USAGE,
      options: SPECS,
      async run({ args: parsed, env, usageError }) {
        const olderThanText = optionValue(parsed, 'older-than');
        const olderThanMs = olderThanText === undefined ? undefined : parseDuration(olderThanText);
        if (olderThanMs === null) {
          return usageError(
            `--older-than must be a whole number and a unit (ms, s, m, h, d) up to 36500d, such as 30d or 0s; not ${JSON.stringify(olderThanText)}`,
          );
        }
        const dryRun = parsed.options.has('dry-run');
        let config: Config;
        try {
          config = loadConfig(env);
        } catch (error) {
          if (!(error instanceof ConfigError)) throw error;
          output.stderr.write(`sis prune: ${error.message}\n`);
          return 1;
        }
        // Each batch is its own transaction: a second run (on new connections, cli-store.ts) goes on
        // where the first stopped, and the rows the first removed are added to what it says.
        const earlier = { auth_codes: 0, outbox: 0, erased: 0 };
        return withCommandStore('prune', output, env, { migrations: 'require', rerun: true }, async (store) => {
          const pruner = new Pruner(store.retention, retentionPolicy(config), null, {
            ...DEFAULT_PRUNER_OPTIONS,
            retryMs: 0,
          });
          let report: PruneReport;
          try {
            report = await pruner.prune({ ...(olderThanMs === undefined ? {} : { olderThanMs }), dryRun });
          } catch (error) {
            earlier.auth_codes += pruner.pruned.auth_codes;
            earlier.outbox += pruner.pruned.outbox;
            earlier.erased += pruner.erasedTexts;
            throw error;
          }
          await writeText(output.stdout, describe(withEarlier(report, earlier), config, dryRun, olderThanMs));
          // The removed bytes leave the SQLite files only once the write-ahead log is emptied.
          if (!dryRun && !(await store.retention.compactLog())) {
            output.stderr.write(
              'sis prune: the SQLite write-ahead log is in use and still holds old pages; the service empties it at its next round\n',
            );
          }
          return 0;
        });
      },
    },
    output,
  );
}

/** A run's report with the rows earlier, failed runs of the command removed. */
function withEarlier(report: PruneReport, earlier: Readonly<Record<RetentionTable | 'erased', number>>): PruneReport {
  const add = (prune: TablePrune | null, n: number): TablePrune | null =>
    prune === null ? null : { ...prune, removed: prune.removed + n };
  return {
    tables: {
      auth_codes: add(report.tables.auth_codes, earlier.auth_codes),
      outbox: add(report.tables.outbox, earlier.outbox),
    },
    erased: report.erased + earlier.erased,
  };
}

function describe(report: PruneReport, config: Config, dryRun: boolean, olderThanMs: number | undefined): string {
  const verb = dryRun ? 'to remove' : 'removed';
  const line = (table: string, prune: TablePrune | null, setting: string, note: string): string =>
    prune === null
      ? `${table}\tkept forever (${setting}=0)\n`
      : `${table}\t${prune.removed} ${verb}\t(created before ${prune.before.toISOString()}${note})\n`;
  const floored = config.authCodesPerHour > 0 && olderThanMs !== undefined && olderThanMs < AUTH_CODE_WINDOW_MS;
  return (
    line(
      'auth_codes',
      report.tables.auth_codes,
      'SIS_AUTH_CODE_RETENTION_MS',
      floored ? '; the last hour kept: SIS_AUTH_CODES_PER_HOUR counts it' : '',
    ) +
    line('outbox', report.tables.outbox, 'SIS_OUTBOX_RETENTION_MS', '; delivered and failed only') +
    (report.erased > 0
      ? `outbox\t${report.erased} ${dryRun ? 'texts to erase' : 'texts erased'}\t(delivered messages stored before texts were erased at delivery)\n`
      : '')
  );
}

export const pruneCommand: Command = createPruneCommand();
