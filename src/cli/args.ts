/**
 * Command-line arguments: long options with or without a value (`--table x`, `--table=x`), `-h`,
 * `--` ending the options, `-` as a positional (standard input). Messages name the argument, for
 * usage errors (exit status 2).
 */

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

export function parseArgs(args: readonly string[], specs: readonly OptionSpec[]): ParsedArgs | { readonly error: string } {
  const options = new Map<string, string | true>();
  const positionals: string[] = [];
  let help = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--') {
      positionals.push(...args.slice(i + 1));
      break;
    }
    if (arg === '-' || !arg.startsWith('-')) {
      positionals.push(arg);
      continue;
    }
    if (arg === '-h' || arg === '--help') {
      help = true;
      continue;
    }
    const eq = arg.indexOf('=');
    const name = arg.startsWith('--') ? arg.slice(2, eq === -1 ? undefined : eq) : '';
    const spec = specs.find((s) => s.name === name);
    if (spec === undefined) return { error: `unknown option ${eq === -1 ? arg : arg.slice(0, eq)}` };
    if (options.has(name)) return { error: `--${name} given twice` };
    if (spec.value !== true) {
      if (eq !== -1) return { error: `--${name} takes no value` };
      options.set(name, true);
      continue;
    }
    let value: string;
    if (eq !== -1) {
      value = arg.slice(eq + 1);
    } else {
      const next = args[++i];
      if (next === undefined) return { error: `--${name} needs a value` };
      value = next;
    }
    if (spec.choices !== undefined && !spec.choices.includes(value)) {
      return { error: `--${name} must be ${spec.choices.join(' or ')}, not ${JSON.stringify(value)}` };
    }
    options.set(name, value);
  }
  return { help, options, positionals };
}

/** The value of an option that takes one (undefined when not given). */
export function optionValue(parsed: ParsedArgs, name: string): string | undefined {
  const v = parsed.options.get(name);
  return typeof v === 'string' ? v : undefined;
}
