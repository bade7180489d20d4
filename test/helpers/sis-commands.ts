/**
 * The admin CLI's commands run in process, for the CLI command tests: `sis(...)` with its output
 * caught, and a temporary directory for the files they import and export. Importing this module
 * registers an `after` hook that removes that directory and the stores' test databases.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import type { Command } from '../../src/cli/command.js';
import { createDevicesCommand } from '../../src/cli/devices-command.js';
import { createExportCommand } from '../../src/cli/export-command.js';
import { createImportCommand } from '../../src/cli/import-command.js';
import { createMigrateCommand } from '../../src/cli/migrate-command.js';
import type { CommandOutput } from '../../src/cli/output.js';
import { createSchoolsCommand, createStatsCommand, createStudentsCommand } from '../../src/cli/report-commands.js';
import { cleanupTargets } from './store-targets.js';

/** The temporary directory of this test process's files. */
export const dir = mkdtempSync(join(tmpdir(), 'sis-cli-'));
after(async () => {
  await cleanupTargets();
  rmSync(dir, { recursive: true, force: true });
});

export interface Outcome {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

type Factory = (output: CommandOutput) => Command;
export const COMMANDS: Readonly<Record<string, Factory>> = {
  import: (o) => createImportCommand(o),
  export: createExportCommand,
  stats: createStatsCommand,
  schools: createSchoolsCommand,
  students: createStudentsCommand,
  devices: createDevicesCommand,
  migrate: createMigrateCommand,
};

/** Runs `sis NAME ARGS` in process with `env`; stderr may pretend to be a terminal. */
export async function sis(
  name: string,
  args: readonly string[],
  env: Record<string, string>,
  options: { tty?: boolean; stdin?: string } = {},
): Promise<Outcome> {
  let stdout = '';
  let stderr = '';
  const output: CommandOutput = {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text), isTTY: options.tty === true, columns: 100 },
  };
  const command =
    name === 'import' && options.stdin !== undefined
      ? createImportCommand(
          output,
          (async function* () {
            yield Buffer.from(options.stdin!, 'utf8');
          })(),
        )
      : COMMANDS[name]!(output);
  const code = await command.run(args, env);
  return { code, stdout, stderr };
}

/** The last number given to a file name in `dir`: `file` wrote its last file as `f-N.EXT`. */
export let counter = 0;

/** The next number for a file name in `dir`, so that no two files share one. */
export function nextNumber(): number {
  return ++counter;
}

/** Writes `content` to a new file in `dir`; returns its path. */
export function file(content: string, ext = 'json'): string {
  const path = join(dir, `f-${nextNumber()}.${ext}`);
  writeFileSync(path, content);
  return path;
}
