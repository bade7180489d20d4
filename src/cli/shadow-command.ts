/**
 * `sis shadow`: what running beside the legacy service found (docs/migrating.md), the accepted
 * differences, and the cut-over gate. Read from the database, so every instance's comparisons and
 * rules are one.
 */
import { ConfigError, loadConfig } from '../config/config.js';
import type { Config } from '../config/config.js';
import { operations } from '../operations/index.js';
import { KIND_ID, patternProblem } from '../shadow/accepted.js';
import { replayKinds } from '../shadow/replay.js';
import type { ReplayedKind } from '../shadow/replay.js';
import { reportHtml } from '../shadow/report-html.js';
import { buildReport, gateReasons, personalFields, reportText, withoutPersonal } from '../shadow/report.js';
import { writePrivateFile } from '../store/private-file.js';
import type { ShadowRule, ShadowRuleSpec, ShadowStore } from '../store/shadow-types.js';
import { optionValue } from './args.js';
import type { ParsedArgs } from './args.js';
import { withCommandStore } from './cli-store.js';
import { defineCommand } from './command.js';
import type { Command } from './command.js';
import { processOutput, writeText } from './output.js';
import type { CommandOutput } from './output.js';
import { parseDuration } from './prune-command.js';

const USAGE = `Usage: sis shadow report [--since DURATION] [--operation OP] [--json] [--show-personal]
       sis shadow report --html FILE [--since DURATION] [--operation OP] [--show-personal]
       sis shadow report --check [--since DURATION] [--operation OP] [--max-legacy-failed N]
                                 [--max-noisy N] [--max-over-cap N]
       sis shadow accept --kind ID --note TEXT
       sis shadow accept --path PATTERN [--service S] [--operation OP] [--binding B] --note TEXT
       sis shadow replay [--kind ID] [--since DURATION] [--json]
       sis shadow rules [--json]
       sis shadow unaccept ID
       sis shadow reset

What the service found beside the legacy service (SIS_SHADOW=compare or legacy), from the
database named by SIS_DATABASE_URL, every instance's comparisons together (docs/migrating.md).

  report    the comparisons per service, operation, binding and result (identical, equivalent,
            accepted, noisy, different, legacy-failed, skipped), then each kind of difference with its
            id, count and one example: the request, both answers, and the paths where they part.
            --since 1h, 30m, 7d: only the comparisons since then (default: all that are kept,
            SIS_SHADOW_RETENTION_MS). --operation: only that operation's. --json: one JSON object.
            --html FILE: one self-contained page (totals, results per operation per hour, each
            kind with both answers side by side, the accepted differences), written to FILE.
            --check: the cut-over gate: exit 0 when the window holds no difference that is not
            accepted, at most --max-legacy-failed (default 0) failures of the legacy service
            at most --max-noisy (default 0) noisy ones, and at most --max-over-cap (default 0)
            comparisons skipped for the in-flight cap (traffic never compared), else 1 with one
            line per reason. Names of people in kept answers (StudentInfo's fullName) are shown
            masked; --show-personal shows them, for an operator on the database's own machine.
  accept    accepts a kind of difference (--kind, its id in the report) or a path wherever it
            differs (--path: a path as the report shows it, * for any one step, no positions or
            keys), within a service file, operation or binding if given; --note says why.
            Prints the new rule's id; every instance applies it within seconds.
  replay    sends the kept example of each kind of difference (or of --kind ID) to the legacy
            service (SIS_LEGACY_URL) and to this service, now, computed here over the same
            database, and says per kind whether it is still different or gone (identical,
            equivalent, accepted, noisy): whether a fix or an import closed it. Writes are never
            replayed.
  rules     the accepted differences, with how many comparisons each accepted.
  unaccept  removes the rule of that id.
  reset     removes every count and kept difference (after a fix, to start afresh).

Exit status: 0 done (report --check: the gate is passed), 1 the gate is not passed, or a
configuration or database error, 2 usage error.
`;

const BINDINGS = ['soap11', 'soap12', 'httpget', 'httppost', 'metadata'];

const SPECS = [
  { name: 'since', value: true },
  { name: 'json' },
  { name: 'check' },
  { name: 'html', value: true },
  { name: 'max-legacy-failed', value: true },
  { name: 'max-noisy', value: true },
  { name: 'max-over-cap', value: true },
  { name: 'show-personal' },
  { name: 'kind', value: true },
  { name: 'path', value: true },
  { name: 'service', value: true },
  { name: 'operation', value: true },
  { name: 'binding', value: true, choices: BINDINGS },
  { name: 'note', value: true },
] as const;

/** The options each action takes. */
const TAKES: Readonly<Record<string, readonly string[]>> = {
  report: [
    'since',
    'json',
    'html',
    'check',
    'max-legacy-failed',
    'max-noisy',
    'max-over-cap',
    'show-personal',
    'operation',
  ],
  accept: ['kind', 'path', 'service', 'operation', 'binding', 'note'],
  rules: ['json'],
  replay: ['kind', 'since', 'json'],
  unaccept: [],
  reset: [],
};

export function createShadowCommand(output: CommandOutput = processOutput): Command {
  return defineCommand(
    {
      name: 'shadow',
      summary: 'report the comparisons with the legacy service, accept known differences, gate the cut-over',
      usage: USAGE,
      options: SPECS,
      positionals: true,
      async run(call) {
        const { args, env, usageError } = call;
        const [action, ...rest] = args.positionals;
        if (action === undefined || !(action in TAKES))
          return usageError(
            action === undefined
              ? 'say report, accept, replay, rules, unaccept or reset'
              : `unknown action ${JSON.stringify(action)}; expected report, accept, replay, rules, unaccept or reset`,
          );
        for (const name of args.options.keys())
          if (!TAKES[action]!.includes(name)) return usageError(`${action} takes no --${name}`);
        if (action !== 'unaccept' && rest.length > 0)
          return usageError(`unexpected argument ${JSON.stringify(rest[0])}`);
        // reset and unaccept are deletes that may run again (accept adds a rule: not run twice).
        const rerun = action === 'reset' || action === 'unaccept';
        const withStore = (run: (store: ShadowStore) => Promise<number>): Promise<number> =>
          withCommandStore('shadow', output, env, { migrations: 'require', rerun }, (store) => run(store.shadow));
        switch (action) {
          case 'reset':
            return withStore(async (store) => {
              const removed = await store.reset();
              output.stdout.write(
                `shadow records cleared (${removed} kept difference${removed === 1 ? '' : 's'} removed)\n`,
              );
              return 0;
            });
          case 'accept': {
            const rule = acceptedRule(args);
            if (typeof rule === 'string') return usageError(rule);
            return withStore(async (store) => {
              const id = await store.addRule(rule, new Date());
              output.stdout.write(`${id}\n`);
              return 0;
            });
          }
          case 'rules':
            return withStore(async (store) => {
              const rules = await store.rules();
              await writeText(
                output.stdout,
                args.options.has('json') ? `${JSON.stringify(rules)}\n` : rulesText(rules),
              );
              return 0;
            });
          case 'unaccept': {
            const id = rest.length === 1 && /^[1-9]\d{0,15}$/.test(rest[0]!) ? Number(rest[0]) : null;
            if (id === null) return usageError('unaccept takes one rule id, as `sis shadow rules` lists them');
            return withStore(async (store) => {
              if (await store.removeRule(id)) return 0;
              output.stderr.write(`sis shadow: no accepted difference has id ${id} (see sis shadow rules)\n`);
              return 1;
            });
          }
        }
        const sinceText = optionValue(args, 'since');
        const sinceMs = sinceText === undefined ? undefined : parseDuration(sinceText);
        if (sinceMs === null)
          return usageError(
            `--since must be a whole number and a unit (ms, s, m, h, d), such as 1h or 7d; not ${JSON.stringify(sinceText)}`,
          );
        if (action === 'replay') {
          const kind = optionValue(args, 'kind') ?? null;
          if (kind !== null && !KIND_ID.test(kind))
            return usageError(
              `--kind is a kind's id as the report shows it (16 hex digits), not ${JSON.stringify(kind)}`,
            );
          let config: Config;
          try {
            config = loadConfig(env);
          } catch (error) {
            if (!(error instanceof ConfigError)) throw error;
            output.stderr.write(`sis shadow: ${error.message}\n`);
            return 1;
          }
          if (config.shadow.legacyUrl === null) {
            output.stderr.write(
              'sis shadow: replay needs SIS_LEGACY_URL, the legacy service to send the examples to\n',
            );
            return 1;
          }
          const spanMs = sinceMs ?? config.shadow.retentionMs;
          const since = new Date(spanMs === 0 ? 0 : Date.now() - spanMs);
          return withCommandStore('shadow', output, env, { migrations: 'require' }, async (store) => {
            const kinds = await replayKinds(config, store, { since, kind });
            await writeText(output.stdout, args.options.has('json') ? `${JSON.stringify(kinds)}\n` : replayText(kinds));
            return 0;
          });
        }
        const check = args.options.has('check');
        const limits = { maxLegacyFailed: 0, maxNoisy: 0, maxOverCap: 0 };
        for (const [option, limit] of [
          ['max-legacy-failed', 'maxLegacyFailed'],
          ['max-noisy', 'maxNoisy'],
          ['max-over-cap', 'maxOverCap'],
        ] as const) {
          const text = optionValue(args, option);
          if (text === undefined) continue;
          if (!check) return usageError(`--${option} goes with --check`);
          if (!/^\d{1,9}$/.test(text))
            return usageError(`--${option} must be a whole number, not ${JSON.stringify(text)}`);
          limits[limit] = Number(text);
        }
        const html = optionValue(args, 'html');
        if ([check, args.options.has('json'), html !== undefined].filter(Boolean).length > 1)
          return usageError('--check, --json and --html do not go together');
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
        const operation = optionValue(args, 'operation') ?? null;
        return withStore(async (store) => {
          const built = await buildReport(store, since, { operation });
          const report = args.options.has('show-personal') ? built : withoutPersonal(built, personalFields(operations));
          if (check) {
            const reasons = gateReasons(report, limits);
            await writeText(output.stdout, reasons.map((r) => `${r}\n`).join('') || 'the cut-over gate is passed\n');
            return reasons.length === 0 ? 0 : 1;
          }
          if (html !== undefined) {
            const hourly = (await store.hourly(since)).filter((h) => operation === null || h.operation === operation);
            // Examples name clients and their requests: the report is its owner's alone (0600).
            await writePrivateFile(html, reportHtml(report, hourly, await store.rules()));
            output.stdout.write(`${html}\n`);
            return 0;
          }
          await writeText(output.stdout, args.options.has('json') ? `${JSON.stringify(report)}\n` : reportText(report));
          return 0;
        });
      },
    },
    output,
  );
}

/** The rule `accept` asks for, or what is wrong with its options. */
function acceptedRule(args: ParsedArgs): ShadowRuleSpec | string {
  const kind = optionValue(args, 'kind') ?? null;
  const path = optionValue(args, 'path') ?? null;
  const note = optionValue(args, 'note');
  if (note === undefined || note.trim() === '') return 'accept needs --note saying why the difference is accepted';
  if ((kind === null) === (path === null)) return 'accept takes either --kind or --path';
  const service = optionValue(args, 'service') ?? null;
  const operation = optionValue(args, 'operation') ?? null;
  const binding = optionValue(args, 'binding') ?? null;
  if (kind !== null) {
    if (!KIND_ID.test(kind))
      return `--kind is a kind's id as the report shows it (16 hex digits), not ${JSON.stringify(kind)}`;
    if (service !== null || operation !== null || binding !== null)
      return 'a kind names its service, operation and binding already: --kind takes no --service, --operation or --binding';
  }
  if (path !== null) {
    const problem = patternProblem(path);
    if (problem !== null) return `--path ${JSON.stringify(path)}: ${problem}`;
  }
  return { kind, path, service: service?.replace(/\.asmx$/i, '') ?? null, operation, binding, note };
}

function replayText(kinds: readonly ReplayedKind[]): string {
  if (kinds.length === 0) return 'no kept example to replay\n';
  let text = 'kind\tnow\tresult\tservice\toperation\tbinding\tnote\n';
  for (const k of kinds)
    text += `${k.kind}\t${k.now}\t${k.result ?? '-'}\t${k.service ?? '-'}\t${k.operation ?? '-'}\t${k.binding}\t${k.note ?? ''}\n`;
  return text;
}

function rulesText(rules: readonly ShadowRule[]): string {
  if (rules.length === 0) return 'no accepted differences\n';
  let text = 'id\thits\taccepts\tnote\n';
  for (const r of rules) {
    const within = [r.service, r.operation, r.binding].filter((v) => v !== null).join(' ');
    const what = r.kind !== null ? `kind ${r.kind}` : `path ${r.path!}${within === '' ? '' : ` in ${within}`}`;
    text += `${r.id}\t${r.hits}\t${what}\t${r.note}\n`;
  }
  return text;
}

export const shadowCommand: Command = createShadowCommand();
