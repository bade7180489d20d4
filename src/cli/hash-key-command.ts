/**
 * `sis hash-key`: makes the `sha256:HEX` form of an API key that SIS_API_KEYS holds, so the
 * configuration never contains a key in clear. Without an argument it makes a new random key.
 */
import { randomBytes } from 'node:crypto';
import type { Command } from './command.js';
import { hashKey } from '../access/access.js';

const USAGE = `Usage: sis hash-key [KEY | -]

Prints the hashed form of an API key, to add to SIS_API_KEYS (comma-separated).
  (no argument)  make a new random key and print it with its hash
  KEY            hash this key (note: it stays in your shell history)
  -              read the key from standard input (one line)

Clients send the key in an X-Api-Key header, or as the password of HTTP Basic
credentials (any user name).`;

export const hashKeyCommand: Command = {
  name: 'hash-key',
  summary: 'make an API key and the hash SIS_API_KEYS holds',
  usage: USAGE,
  async run(args) {
    if (args.length > 1) {
      process.stderr.write(`sis hash-key: one key expected, got ${args.length}\n\n${USAGE}\n`);
      return 2;
    }
    const arg = args[0];
    if (arg === undefined) {
      const key = randomBytes(32).toString('base64url');
      process.stdout.write(`key:  ${key}\nhash: ${hashKey(key)}\n`);
      return 0;
    }
    const key = arg === '-' ? (await readStdin()).replace(/\r?\n$/, '') : arg;
    if (key === '') {
      process.stderr.write('sis hash-key: the key is empty\n');
      return 1;
    }
    process.stdout.write(`${hashKey(key)}\n`);
    return 0;
  },
};

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
