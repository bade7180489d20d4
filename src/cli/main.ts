#!/usr/bin/env node
import { COMMANDS } from './command-list.js';

function help(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  return `Usage: sis <command> [options]

Commands:
${COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`).join('\n')}
  ${'help'.padEnd(width)}  show this help, or a command's (sis help <command>)

Configuration comes from environment variables or SIS_CONFIG_FILE (see docs/operations.md).
`;
}

async function main(argv: readonly string[]): Promise<number> {
  const [name = 'serve', ...rest] = argv;
  if (name === 'help' || name === '--help' || name === '-h') {
    const target = COMMANDS.find((c) => c.name === rest[0]);
    process.stdout.write(target === undefined ? help() : `${(await target.load()).usage}\n`);
    return 0;
  }
  const entry = COMMANDS.find((c) => c.name === name);
  if (entry === undefined) {
    process.stderr.write(`sis: unknown command '${name}'\n\n${help()}`);
    return 2;
  }
  const command = await entry.load();
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
