/**
 * `sis outbox`: the SMS messages AuthCode queued, for an operator. Codes are never printed and
 * phones only with their last two digits, as in the logs: this output ends up in tickets.
 */
import { REFUSED_ACCOUNT, REFUSED_NUMBER } from '../outbox/outbox-worker.js';
import type { DeliveryRate, DeliveryRates, OutboxMessage, OutboxState } from '../store/outbox-types.js';
import { maskPhone } from '../store/phone-mask.js';
import type { SmsStats } from '../store/sms-types.js';
import { optionValue } from './args.js';
import { withCommandStore } from './cli-store.js';
import { defineCommand } from './command.js';
import type { Command, CommandCall } from './command.js';
import { processOutput, writeText } from './output.js';
import type { CommandOutput } from './output.js';

const USAGE = `Usage: sis outbox [list [--state pending|delivered|failed] [--limit N]]
       sis outbox retry (ID... | --failed)
       sis outbox stats

The SMS outbox of the database named by SIS_DATABASE_URL: one message per code AuthCode
accepted, delivered by the running service through SIS_SMS_GATEWAY's gateways (in order,
the next when one refuses) with retries, ending delivered or failed (after
SIS_OUTBOX_MAX_ATTEMPTS attempts).

  list    the newest messages first (default: the last 100), tab-separated with a header:
          id, state, attempts, phone, code, created_at, next_attempt_at, delivered_at,
          last_error, receipt, receipt_reason (the gateway's delivery receipt: delivered,
          failed or undelivered, and its reason; SIS_SMS_RECEIPT_PATH), gateway (the one
          that took the message), refusal (for a message not delivered: account when a
          gateway refused our account or configuration, whatever the number: credentials,
          credit, sender id; number when every gateway refused the number for good).
          Codes are shown
          as *** and phones with their last two digits only (a delivered message no longer
          holds its code or text at all, and its phone is stored masked).
  retry   makes failed messages (those given by id, or all with --failed) pending again
          with a full round of attempts; the service sends them at its next poll. Pending
          and delivered messages are left alone: a delivered code is never sent twice.
  stats   the number of pending, delivered and failed messages, then for each table with
          a retention (outbox, auth_codes) the rows it keeps now and the rows pruned so
          far (by every process; see sis prune), tab-separated. Then AuthCode's protection
          (docs/sms.md) over the last hour and day: refused codes by reason
          (refused_hour:REASON), and the five busiest number ranges and countries by codes
          asked, accepted and refused (range_hour:+96650123, country_day:SA); would-be
          refusals of monitor mode as refused_hour:monitor:REASON. Last, delivery rates from
          the gateway's receipts: per country (delivery_day:SA 97% of 210), then the five
          ranges with the most messages not delivered (delivery_day:+96650123 0% of 40),
          and the messages each gateway took (gateway_hour:twilio 12, gateway_day:...).

Exit status: 0 done, 1 database error, 2 usage error.
`;

const SPECS = [
  { name: 'state', value: true, choices: ['pending', 'delivered', 'failed'] },
  { name: 'limit', value: true },
  { name: 'failed' },
] as const;

const HEADER = [
  'id',
  'state',
  'attempts',
  'phone',
  'code',
  'created_at',
  'next_attempt_at',
  'delivered_at',
  'last_error',
  'receipt',
  'receipt_reason',
  'gateway',
  'refusal',
];

/** Whose the last refusal of a message not delivered was: the account's, the number's, or neither's (''). */
function refusalOf(m: OutboxMessage): string {
  if (m.state === 'delivered' || m.lastError === null) return '';
  return m.lastError.startsWith(REFUSED_ACCOUNT) ? 'account' : m.lastError.startsWith(REFUSED_NUMBER) ? 'number' : '';
}

export function createOutboxCommand(output: CommandOutput = processOutput): Command {
  return defineCommand(
    {
      name: 'outbox',
      summary: 'list, count and retry the SMS messages of AuthCode (codes masked)',
      usage: USAGE,
      options: SPECS,
      positionals: true,
      async run(call) {
        const [action = 'list', ...rest] = call.args.positionals;
        const only = (allowed: readonly string[]): string | null => {
          const other = [...call.args.options.keys()].find((o) => !allowed.includes(o));
          return other === undefined ? null : `--${other} is not an option of "outbox ${action}"`;
        };
        const noMore = (): string | null => (rest.length > 0 ? `unexpected argument ${JSON.stringify(rest[0])}` : null);
        if (action === 'list') return list(call, output, only(['state', 'limit']) ?? noMore());
        if (action === 'retry') return retry(call, output, only(['failed']), rest);
        if (action === 'stats') return stats(call, output, only([]) ?? noMore());
        return call.usageError(`unknown action ${JSON.stringify(action)}; expected list, retry or stats`);
      },
    },
    output,
  );
}

async function list(
  { args, env, usageError }: CommandCall,
  output: CommandOutput,
  problem: string | null,
): Promise<number> {
  if (problem !== null) return usageError(problem);
  const limitText = optionValue(args, 'limit') ?? '100';
  const limit = Number(limitText);
  if (!/^\d+$/.test(limitText) || limit < 1 || limit > 1_000_000)
    return usageError(`--limit must be a whole number from 1 to 1000000, not ${JSON.stringify(limitText)}`);
  const state = optionValue(args, 'state') as OutboxState | undefined;
  return withCommandStore('outbox', output, env, { migrations: 'require' }, async (store) => {
    const messages = await store.listOutbox({ ...(state === undefined ? {} : { state }), limit });
    let text = `${HEADER.join('\t')}\n`;
    for (const m of messages) {
      const fields = [
        String(m.id),
        m.state,
        String(m.attempts),
        maskPhone(m.phone),
        '***',
        m.createdAt.toISOString(),
        m.state === 'pending' ? m.nextAttemptAt.toISOString() : '',
        m.deliveredAt?.toISOString() ?? '',
        // One line per message; a gateway's error text never holds the code (webhook.ts).
        (m.lastError ?? '').replace(/\s+/g, ' '),
        m.receipt ?? '',
        m.receiptReason ?? '',
        m.gateway ?? '',
        refusalOf(m),
      ];
      text += `${fields.join('\t')}\n`;
    }
    await writeText(output.stdout, text);
    return 0;
  });
}

async function retry(
  { args, env, usageError }: CommandCall,
  output: CommandOutput,
  problem: string | null,
  rest: readonly string[],
): Promise<number> {
  if (problem !== null) return usageError(problem);
  const all = args.options.has('failed');
  if (all && rest.length > 0) return usageError('give message ids or --failed, not both');
  if (!all && rest.length === 0)
    return usageError('name the messages to retry by id, or use --failed for every failed one');
  const bad = rest.find((id) => !/^[1-9]\d{0,15}$/.test(id));
  if (bad !== undefined) return usageError(`not a message id: ${JSON.stringify(bad)}`);
  const ids = rest.map(Number);
  // One update, which a failure rolls back (run again, it finds the messages pending already).
  return withCommandStore('outbox', output, env, { migrations: 'require', rerun: true }, async (store) => {
    const retried = await store.retryOutbox(all ? 'failed' : ids, new Date());
    const of = all ? '' : ` of ${ids.length}`;
    const note = !all && retried < ids.length ? ' (only failed messages are retried)' : '';
    output.stdout.write(`${retried}${of} message${retried === 1 && of === '' ? '' : 's'} pending again${note}\n`);
    return 0;
  });
}

async function stats({ env, usageError }: CommandCall, output: CommandOutput, problem: string | null): Promise<number> {
  if (problem !== null) return usageError(problem);
  return withCommandStore('outbox', output, env, { migrations: 'require' }, async (store) => {
    const counts = await store.outboxCounts();
    const kept = await store.retention.retentionCounts();
    const lines: [string, number | string][] = [
      ['pending', counts.pending],
      ['delivered', counts.delivered],
      ['failed', counts.failed],
      ['outbox_kept', kept.outbox.kept],
      ['outbox_pruned', kept.outbox.pruned],
      ['auth_codes_kept', kept.auth_codes.kept],
      ['auth_codes_pruned', kept.auth_codes.pruned],
    ];
    const now = new Date();
    lines.push(...smsLines(await store.sms.smsStats(now, 5)));
    for (const [span, ms] of [
      ['hour', 3_600_000],
      ['day', 86_400_000],
    ] as const)
      lines.push(...deliveryLines(span, await store.deliveryRates(new Date(now.getTime() - ms), 5)));
    for (const [span, ms] of [
      ['hour', 3_600_000],
      ['day', 86_400_000],
    ] as const)
      for (const [gateway, n] of await store.sentByGateway(new Date(now.getTime() - ms)))
        lines.push([`gateway_${span}:${gateway}`, n]);
    output.stdout.write(lines.map(([k, v]) => `${k}\t${v}\n`).join(''));
    return 0;
  });
}

export const outboxCommand: Command = createOutboxCommand();

/**
 * Delivery rates from the gateway's receipts (docs/sms.md): `delivery_day:SA  97% of 210`, per
 * country, and per range those with the most messages not delivered first (a range whose
 * messages never arrive is a pumping signal): `delivery_day:+96650123  0% of 40`.
 */
function deliveryLines(span: string, rates: DeliveryRates): [string, string][] {
  const line = (r: DeliveryRate): [string, string] => [
    `delivery_${span}:${r.key}`,
    `${Math.round((100 * r.delivered) / r.receipts)}% of ${r.receipts}`,
  ];
  return [...rates.countries.map(line), ...rates.ranges.map(line)];
}

/** The SMS protection's part of `stats`: `refused_hour:address 12`, `range_day:+96650123 2000`. */
function smsLines(stats: SmsStats): [string, number][] {
  const lines: [string, number][] = [];
  for (const [span, refused, ranges, countries] of [
    ['hour', stats.refusedHour, stats.rangesHour, stats.countriesHour],
    ['day', stats.refusedDay, stats.rangesDay, stats.countriesDay],
  ] as const) {
    for (const [reason, n] of refused) lines.push([`refused_${span}:${reason}`, n]);
    for (const [range, n] of ranges) lines.push([`range_${span}:${range}`, n]);
    for (const [country, n] of countries) lines.push([`country_${span}:${country}`, n]);
  }
  return lines;
}
