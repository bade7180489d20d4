/**
 * `sis sms`: stop or allow again one number range during an SMS pumping incident, without a
 * restart. Blocks are kept in the database; every running instance reads them within a second
 * (src/sms/blocked-range-cache.ts). docs/sms.md says when to use it.
 */
import { loadConfig } from '../config/config.js';
import { optionValue } from './args.js';
import { withCommandStore } from './cli-store.js';
import { defineCommand } from './command.js';
import type { Command, CommandCall } from './command.js';
import { processOutput, writeText } from './output.js';
import type { CommandOutput } from './output.js';

const USAGE = `Usage: sis sms block-range RANGE [--for DURATION]
       sis sms allow-range RANGE
       sis sms blocked

Stops AuthCode from sending codes to numbers of one range, in the database named by
SIS_DATABASE_URL; every running instance applies it within a second, without a restart.

  block-range  refuses codes to every number starting with RANGE: + and 4 to 14 digits in
               international form, as numbers are stored (+96650123 stops +966501230000 to
               +966501239999). --for 30m, 24h or 7d ends the block by itself; without it, the
               block lasts until allow-range. Blocking again replaces the end.
  allow-range  lifts the block of RANGE (exactly as it was given).
  blocked      the blocks in force, tab-separated: range, until (empty: until allowed), since.

Callers of a blocked range are told that codes cannot be sent to the phone right now.
block-range reads SIS_SMS_GUARD as the instances do (environment, SIS_CONFIG_FILE) and says so
when it leaves blocked-range only watched: such instances count the block's would-be refusals
and still send the codes.
Exit status: 0 done, 1 database error (or allow-range of a range not blocked), 2 usage error.
`;

const SPECS = [{ name: 'for', value: true }] as const;
const UNIT_MS: ReadonlyMap<string, number> = new Map([
  ['m', 60_000],
  ['h', 3_600_000],
  ['d', 86_400_000],
]);

export function createSmsCommand(output: CommandOutput = processOutput): Command {
  return defineCommand(
    {
      name: 'sms',
      summary: 'stop or allow a number range for AuthCode during an SMS pumping incident',
      usage: USAGE,
      options: SPECS,
      positionals: true,
      async run(call) {
        const [action, range, ...rest] = call.args.positionals;
        if (action === 'blocked') {
          if (range !== undefined) return call.usageError(`unexpected argument ${JSON.stringify(range)}`);
          return blocked(call, output);
        }
        if (action !== 'block-range' && action !== 'allow-range')
          return call.usageError(
            `unknown action ${JSON.stringify(action ?? '')}; expected block-range, allow-range or blocked`,
          );
        if (range === undefined || !/^\+[0-9]{4,14}$/.test(range))
          return call.usageError(`${action} needs a RANGE: + and 4 to 14 digits, such as +96650123`);
        if (rest.length > 0) return call.usageError(`unexpected argument ${JSON.stringify(rest[0])}`);
        if (action === 'allow-range') {
          if (call.args.options.has('for')) return call.usageError('--for is an option of block-range only');
          return allow(call, output, range);
        }
        return block(call, output, range);
      },
    },
    output,
  );
}

async function block(call: CommandCall, output: CommandOutput, range: string): Promise<number> {
  const text = optionValue(call.args, 'for');
  const m = text === undefined ? null : /^([1-9][0-9]{0,5})(m|h|d)$/.exec(text);
  if (text !== undefined && m === null)
    return call.usageError(`--for must be a duration such as 30m, 24h or 7d, not ${JSON.stringify(text)}`);
  const now = new Date();
  const until = m === null ? null : new Date(now.getTime() + Number(m[1]) * UNIT_MS.get(m[2]!)!);
  // One upsert, one delete: run again, each leaves the same row (or none).
  return withCommandStore('sms', output, call.env, { migrations: 'require', rerun: true }, async (store) => {
    await store.sms.blockRange(range, until, now);
    output.stdout.write(
      `${range} blocked ${until === null ? 'until allowed again' : `until ${until.toISOString()}`}\n`,
    );
    // The instances share this command's settings (the deploy's environment or SIS_CONFIG_FILE).
    if (loadConfig(call.env).sms.monitored.has('blocked-range'))
      output.stderr.write(
        `sis sms: SIS_SMS_GUARD watches blocked-range only (monitor): instances with this setting still send codes to ${range}; set blocked-range=enforce (or remove it from SIS_SMS_GUARD) and restart them\n`,
      );
    return 0;
  });
}

async function allow(call: CommandCall, output: CommandOutput, range: string): Promise<number> {
  return withCommandStore('sms', output, call.env, { migrations: 'require', rerun: true }, async (store) => {
    if (await store.sms.allowRange(range)) {
      output.stdout.write(`${range} allowed again\n`);
      return 0;
    }
    output.stderr.write(`sis sms: ${range} was not blocked (see sis sms blocked)\n`);
    return 1;
  });
}

async function blocked(call: CommandCall, output: CommandOutput): Promise<number> {
  return withCommandStore('sms', output, call.env, { migrations: 'require' }, async (store) => {
    const ranges = await store.sms.blockedRanges(new Date());
    let text = 'range\tuntil\tsince\n';
    for (const b of ranges) text += `${b.range}\t${b.until?.toISOString() ?? ''}\t${b.createdAt.toISOString()}\n`;
    await writeText(output.stdout, text);
    return 0;
  });
}

export const smsCommand: Command = createSmsCommand();
