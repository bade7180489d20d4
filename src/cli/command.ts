/**
 * One `sis` sub-command, and the one way commands are built (`defineCommand`): every command's
 * arguments are parsed by the same rules (src/cli/args.ts), `-h`/`--help` prints its usage, and a
 * mistake in the arguments is a usage error (exit status 2) worded the same everywhere.
 */
import { parseArgs } from './args.js';
import type { OptionSpec, ParsedArgs } from './args.js';
import { processOutput, usageError } from './output.js';
import type { CommandOutput } from './output.js';

export type Env = Readonly<Record<string, string | undefined>>;

/** `run` returns the process exit code; it writes its own output. */
export interface Command {
  readonly name: string;
  /** One line for `sis help`. */
  readonly summary: string;
  /** The full help text for `sis help NAME` and `sis NAME --help`. */
  readonly usage: string;
  run(args: readonly string[], env: Env): Promise<number>;
}

/** What a command's body is given: its parsed arguments, the environment, where to write. */
export interface CommandCall {
  readonly args: ParsedArgs;
  readonly env: Env;
  readonly output: CommandOutput;
  /** Writes `sis NAME: message`, then the usage, to stderr; returns 2. */
  usageError(message: string): number;
}

export interface CommandSpec {
  readonly name: string;
  readonly summary: string;
  readonly usage: string;
  /** The options besides -h/--help. */
  readonly options?: readonly OptionSpec[];
  /** Positional arguments are the body's to judge; without this, any is a usage error. */
  readonly positionals?: boolean;
  run(call: CommandCall): Promise<number>;
}

export function defineCommand(spec: CommandSpec, output: CommandOutput = processOutput): Command {
  const usageText = spec.usage.endsWith('\n') ? spec.usage : `${spec.usage}\n`;
  const fail = (message: string): number => usageError(output, spec.name, usageText, message);
  return {
    name: spec.name,
    summary: spec.summary,
    usage: spec.usage,
    run(args, env) {
      const parsed = parseArgs(args, spec.options ?? []);
      if ('error' in parsed) return Promise.resolve(fail(parsed.error));
      if (parsed.help) {
        output.stdout.write(usageText);
        return Promise.resolve(0);
      }
      if (spec.positionals !== true && parsed.positionals.length > 0) {
        return Promise.resolve(fail(`unexpected argument ${JSON.stringify(parsed.positionals[0])}`));
      }
      return spec.run({ args: parsed, env, output, usageError: fail });
    },
  };
}
