/**
 * The systemd unit (deploy/systemd/sis.service): `systemd-analyze verify` says nothing at all
 * (it exits 0 on unknown keys, so any output fails), its offline security exposure is at most 4.0,
 * and it does not restart the start-up failures a restart cannot cure. Running it under systemd in
 * a container is in systemd-container.test.ts.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { EXIT_STATUS } from '../../src/app/startup-failure-report.js';
import { findExecutable, run } from '../clients/client-scenario.js';
import { repoRoot } from '../helpers/test-server.js';

const ANALYZE = findExecutable('systemd-analyze');
const SKIP = ANALYZE === null ? 'systemd-analyze not found: install Debian’s systemd package' : false;
const UNIT = readFileSync(join(repoRoot, 'deploy', 'systemd', 'sis.service'), 'utf8');
const dir = mkdtempSync(join(tmpdir(), 'sis-unit-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** The unit as shipped; where Node is not /usr/bin/node here, verify is pointed at this one (it checks the path exists). */
function unitFile(): string {
  const file = join(dir, 'sis.service');
  const node = findExecutable('/usr/bin/node') ?? process.execPath;
  writeFileSync(file, UNIT.replace('ExecStart=/usr/bin/node ', `ExecStart=${node} `));
  return file;
}

function values(key: string): string[] {
  return [...UNIT.matchAll(new RegExp(`^${key}=(.*)$`, 'gm'))].map((m) => m[1]!);
}

describe('systemd unit', () => {
  it('passes systemd-analyze verify without a word', { skip: SKIP }, async () => {
    const { stdout, stderr } = await run(ANALYZE!, ['verify', unitFile()], { cwd: dir });
    assert.equal(stdout + stderr, '');
  });

  it('has an offline security exposure of at most 4.0', { skip: SKIP }, async () => {
    const { stdout } = await run(ANALYZE!, ['security', '--offline=yes', '--no-pager', unitFile()], { cwd: dir });
    const exposure = /Overall exposure level for sis\.service: ([\d.]+)/.exec(stdout)?.[1];
    assert.ok(exposure !== undefined, stdout.slice(-500));
    assert.ok(Number(exposure) <= 4.0, `exposure ${exposure}`);
  });

  it('restarts on failure except on the start-up failures a restart cannot cure', () => {
    assert.deepEqual(values('Restart'), ['on-failure']);
    const expected = Object.values(EXIT_STATUS).filter((s) => s !== EXIT_STATUS.failure && s !== EXIT_STATUS.usage);
    assert.deepEqual(values('RestartPreventExitStatus')[0]!.split(' ').map(Number), expected);
    const operations = readFileSync(join(repoRoot, 'docs', 'operations.md'), 'utf8');
    assert.ok(operations.includes(`RestartPreventExitStatus=${expected.join(' ')}`), 'docs/operations.md names them');
    for (const key of ['ProtectSystem', 'NoNewPrivileges', 'StateDirectory', 'DynamicUser', 'EnvironmentFile'])
      assert.equal(values(key).length, 1, `${key}= is set`);
  });
});
