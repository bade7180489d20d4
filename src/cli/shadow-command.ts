/**
 * `sis shadow`: what running beside the legacy service found (docs/migrating.md). Read from the
 * database, so every instance's comparisons are in one report.
 */
import { ConfigError, loadConfig } from '../config/config.js';
import { buildReport, reportText } from '../shadow/report.js';
import { optionValue } from './args.js';
import { withCommandStore } from './cli-store.js';
import { defineCommand } from './command.js';
import type { Command } from './command.js';
import { processOutput, writeText } from './output.js';
import type { CommandOutput } from './output.js';
import { parseDuration } from './prune-command.js';

const USAGE = `Usage: sis shadow report [--since DURATION] [--json]
       sis shadow reset

What the service found beside the legacy service (SIS_SHADOW=compare or legacy), from the
database named by SIS_DATABASE_URL, every instance's comparisons together.

  report  the comparisons per service, operation, binding and result (identical, equivalent,
          different, legacy-failed, skipped), then each kind of difference with its count
          and one example: the request, both answers, and the paths where they part.
          --since 1h, 30m, 7d: only the comparisons since then (default: all that are kept,
          SIS_SHADOW_RETENTION_MS). --json: one JSON object (see docs/migrating.md).
  reset   removes every count and kept difference (after a fix, to start afresh).

Exit status: 0 done, 1 configuration or database error, 2 usage error.
`;

const SPECS = [{ name: 'since', value: true }, { name: 'json' }] as const;

export function createShadowCommand(output: CommandOutput = processOutput): Command {
  return defineCommand(
    {
      name: 'shadow',
      summary: 'report (or reset) the comparisons with the legacy service',
      usage: USAGE,
      options: SPECS,
      positionals: true,
      async run(call) {
        const { args, env, usageError } = call;
        const [action, ...rest] = args.positionals;
        if (rest.length > 0) return usageError(`unexpected argument ${JSON.stringify(rest[0])}`);
        if (action === 'reset') {
          if (args.options.size > 0) return usageError('reset takes no option');
          return withCommandStore('shadow', output, env, { migrations: 'require' }, async (store) => {
            const removed = await store.shadow.reset();
            output.stdout.write(
              `shadow records cleared (${removed} kept difference${removed === 1 ? '' : 's'} removed)\n`,
            );
            return 0;
          });
        }
        if (action !== 'report')
          return usageError(
            action === undefined
              ? 'say report or reset'
              : `unknown action ${JSON.stringify(action)}; expected report or reset`,
          );
        const sinceText = optionValue(args, 'since');
        const sinceMs = sinceText === undefined ? undefined : parseDuration(sinceText);
        if (sinceMs === null)
          return usageError(
            `--since must be a whole number and a unit (ms, s, m, h, d), such as 1h or 7d; not ${JSON.stringify(sinceText)}`,
          );
        let keptMs: number;
        try {
          keptMs = loadConfig(env).shadow.retentionMs;
        } catch (error) {
          if (!(error instanceof ConfigError)) throw error;
          output.stderr.write(`sis shadow: ${error.message}\n`);
          return 1;
        }
        const spanMs = sinceMs ?? keptMs;
        const since = new Date(spanMs === 0 ? 0 : Date.now() - spanMs);
        return withCommandStore('shadow', output, env, { migrations: 'require' }, async (store) => {
          const report = await buildReport(store.shadow, since);
          await writeText(output.stdout, args.options.has('json') ? `${JSON.stringify(report)}\n` : reportText(report));
          return 0;
        });
      },
    },
    output,
  );
}

export const shadowCommand: Command = createShadowCommand();
