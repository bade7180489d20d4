/**
 * `sis` loads a command only when it runs: the list main.ts shows in `sis help` carries each
 * command's summary, which must stay the command's own.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { COMMANDS } from '../../src/cli/command-list.js';
import { runSis } from '../helpers/serve-process.js';

/** A summary is text, not a pattern: `(or reset)` must match itself. */
const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe('the command list', () => {
  it('names each command by its own name and summary', async () => {
    for (const entry of COMMANDS) {
      const command = await entry.load();
      assert.equal(command.name, entry.name);
      assert.equal(command.summary, entry.summary, `summary of ${entry.name}`);
    }
  });

  it('shows every command in `sis --help` and a command usage in `sis help NAME`', async () => {
    const help = await runSis(['--help'], 'sqlite::memory:');
    assert.equal(help.code, 0);
    for (const entry of COMMANDS)
      assert.match(help.stdout, new RegExp(`^  ${entry.name} +${escapeRegExp(entry.summary.slice(0, 20))}`, 'm'));
    const usage = await runSis(['help', 'migrate'], 'sqlite::memory:');
    assert.equal(usage.code, 0);
    assert.match(usage.stdout, /^Usage: sis migrate/);
  });
});
