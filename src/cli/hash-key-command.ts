/**
 * `sis hash-key`: makes the `sha256:HEX` form of an API key that SIS_API_KEYS holds, so the
 * configuration never contains a key in clear. Without an argument it makes a new random key.
 */
import { randomBytes } from 'node:crypto';
import { hashKey } from '../access/access.js';
import { defineCommand } from './command.js';
import type { Command } from './command.js';
import { processOutput } from './output.js';
import type { CommandOutput } from './output.js';

const USAGE = `Usage: sis hash-key [KEY | -]

Prints the hashed form of an API key, to add to SIS_API_KEYS (comma-separated).
  (no argument)  make a new random key and print it with its hash
  KEY            hash this key (note: it stays in your shell history)
  -              read the key from standard input (one line)

Clients send the key in an X-Api-Key header, or as the password of HTTP Basic
credentials (any user name).`;

export function createHashKeyCommand(output: CommandOutput = processOutput): Command {
  return defineCommand(
    {
      name: 'hash-key',
      summary: 'make an API key and the hash SIS_API_KEYS holds',
      usage: USAGE,
      positionals: true,
      async run({ args, usageError }) {
        const keys = args.positionals;
        if (keys.length > 1) return usageError(`one key expected, got ${keys.length}`);
        const arg = keys[0];
        if (arg === undefined) {
          const key = randomBytes(32).toString('base64url');
          output.stdout.write(`key:  ${key}\nhash: ${hashKey(key)}\n`);
          return 0;
        }
        const key = arg === '-' ? (await readStdin()).replace(/\r?\n$/, '') : arg;
        if (key === '') {
          output.stderr.write('sis hash-key: the key is empty\n');
          return 1;
        }
        output.stdout.write(`${hashKey(key)}\n`);
        return 0;
      },
    },
    output,
  );
}

export const hashKeyCommand: Command = createHashKeyCommand();

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
