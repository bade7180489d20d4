/** One `sis` sub-command. `run` returns the process exit code; it writes its own output. */
export interface Command {
  readonly name: string;
  /** One line for `sis help`. */
  readonly summary: string;
  /** The full help text for `sis help NAME` and `sis NAME --help`. */
  readonly usage: string;
  run(args: readonly string[], env: Readonly<Record<string, string | undefined>>): Promise<number>;
}
