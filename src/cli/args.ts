/**
 * Command-line arguments: long options with or without a value (`--table x`, `--table=x`), `-h`,
 * `--` ending the options, `-` as a positional (standard input). Messages name the argument, for
 * usage errors (exit status 2).
 */
import { parseArgs as parseNodeArgs } from 'node:util';

export interface OptionSpec {
  readonly name: string;
  /** Takes a value. */
  readonly value?: boolean;
  /** The values allowed, when there is a short list. */
  readonly choices?: readonly string[];
}

export interface ParsedArgs {
  readonly help: boolean;
  readonly options: ReadonlyMap<string, string | true>;
  readonly positionals: readonly string[];
}

export function parseArgs(
  args: readonly string[],
  specs: readonly OptionSpec[],
): ParsedArgs | { readonly error: string } {
  // Node's parser splits the arguments (`--x=v`, `--x v`, `--`, `-`, `-h`); the checks and their
  // messages are ours, so it runs lenient and every option it saw is judged here.
  const config: Record<string, { type: 'string' | 'boolean'; short?: string }> = {
    help: { type: 'boolean', short: 'h' },
  };
  for (const spec of specs) config[spec.name] = { type: spec.value === true ? 'string' : 'boolean' };
  const { tokens } = parseNodeArgs({
    args: [...args],
    options: config,
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  const options = new Map<string, string | true>();
  const positionals: string[] = [];
  let help = false;
  for (const token of tokens) {
    if (token.kind === 'positional') positionals.push(token.value);
    if (token.kind !== 'option') continue;
    const { name, value } = token;
    const spec = specs.find((s) => s.name === name);
    if (name === 'help') help = true;
    else if (spec === undefined) return { error: `unknown option ${token.rawName}` };
    else if (options.has(name)) return { error: `--${name} given twice` };
    else if (spec.value !== true) {
      if (value !== undefined) return { error: `--${name} takes no value` };
      options.set(name, true);
    } else if (value === undefined) return { error: `--${name} needs a value` };
    else if (spec.choices !== undefined && !spec.choices.includes(value)) {
      return { error: `--${name} must be ${spec.choices.join(' or ')}, not ${JSON.stringify(value)}` };
    } else options.set(name, value);
  }
  return { help, options, positionals };
}

/** The value of an option that takes one (undefined when not given). */
export function optionValue(parsed: ParsedArgs, name: string): string | undefined {
  const v = parsed.options.get(name);
  return typeof v === 'string' ? v : undefined;
}
