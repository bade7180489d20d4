#!/usr/bin/env node
import type { Command } from './command.js';
import { importCommand } from './import-command.js';
import { exportCommand } from './export-command.js';
import { statsCommand, schoolsCommand, studentsCommand } from './report-commands.js';
import { devicesCommand } from './devices-command.js';
import { migrateCommand } from './migrate-command.js';
import { outboxCommand } from './outbox-command.js';
import { hashKeyCommand } from './hash-key-command.js';
import { pruneCommand } from './prune-command.js';
import { serveCommand } from './serve-command.js';
import { checkCommand } from './check-command.js';
import { shadowCommand } from './shadow-command.js';

const commands: readonly Command[] = [
  serveCommand,
  checkCommand,
  importCommand,
  exportCommand,
  statsCommand,
  schoolsCommand,
  studentsCommand,
  devicesCommand,
  migrateCommand,
  outboxCommand,
  pruneCommand,
  shadowCommand,
  hashKeyCommand,
];

function help(): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  return `Usage: sis <command> [options]

Commands:
${commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`).join('\n')}
  ${'help'.padEnd(width)}  show this help, or a command's (sis help <command>)

Configuration comes from environment variables or SIS_CONFIG_FILE (see docs/operations.md).
`;
}

async function main(argv: readonly string[]): Promise<number> {
  const [name = 'serve', ...rest] = argv;
  if (name === 'help' || name === '--help' || name === '-h') {
    const target = commands.find((c) => c.name === rest[0]);
    process.stdout.write(target === undefined ? help() : `${target.usage}\n`);
    return 0;
  }
  const command = commands.find((c) => c.name === name);
  if (command === undefined) {
    process.stderr.write(`sis: unknown command '${name}'\n\n${help()}`);
    return 2;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    process.stdout.write(`${command.usage}\n`);
    return 0;
  }
  return command.run(rest, process.env);
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`sis: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
