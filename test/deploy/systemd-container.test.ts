/**
 * The systemd unit run by systemd itself (PID 1 in a podman container, since systemd is not
 * PID 1 on every test machine): started and answering, restarted after `kill -9`, and not
 * restarted after a configuration error, which ends with status 78 and its one line in the
 * journal. Skipped with a message where podman is missing or cannot run containers.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { EXIT_STATUS } from '../../src/app/startup-failure-report.js';
import { eventually } from '../helpers/sms-gateway.js';
import { repoRoot } from '../helpers/test-server.js';
import { IMAGE, buildImage, podman, podmanMissing, podmanStatus } from './podman.js';

const SKIP = await podmanMissing();
const SYSTEMD_IMAGE = 'localhost/sis-systemd:test';
const name = `sis-systemd-test-${randomBytes(4).toString('hex')}`;
const context = mkdtempSync(join(tmpdir(), 'sis-systemd-'));

async function sh(command: string): Promise<string> {
  return (await podman(['exec', name, 'sh', '-c', command])).stdout.trim();
}

/** The unit's properties, as `systemctl show` gives them. */
async function show(): Promise<Record<string, string>> {
  const text = await sh('systemctl show -p ActiveState,SubState,MainPID,NRestarts,ExecMainStatus sis');
  return Object.fromEntries(text.split('\n').map((line) => line.split('=', 2) as [string, string]));
}

describe('systemd unit under systemd (podman)', { skip: SKIP, timeout: 1_800_000 }, () => {
  let url = '';

  before(
    async () => {
      await buildImage();
      copyFileSync(join(repoRoot, 'test', 'deploy', 'systemd.Containerfile'), join(context, 'Containerfile'));
      copyFileSync(join(repoRoot, 'deploy', 'systemd', 'sis.service'), join(context, 'sis.service'));
      await podman(
        [
          'build',
          '--format',
          'docker',
          '--pull=never',
          '--build-arg',
          `SIS_IMAGE=${IMAGE}`,
          '-t',
          SYSTEMD_IMAGE,
          context,
        ],
        900_000,
      );
      await podman(['run', '-d', '--name', name, '--systemd=always', '-p', '127.0.0.1::8080', SYSTEMD_IMAGE]);
      url = `http://127.0.0.1:${(await podman(['port', name, '8080'])).stdout.trim().split(':').pop()}`;
    },
    { timeout: 1_500_000 },
  );
  after(async () => {
    await podmanStatus(['rm', '-f', '-v', '-t', '0', name]);
    rmSync(context, { recursive: true, force: true });
  });

  const ready = (): Promise<true> =>
    eventually(
      async () => ((await fetch(`${url}/readyz`).catch(() => null))?.ok === true ? true : undefined),
      30_000,
      'ready',
    );

  it('starts the service, sandboxed, and it answers', async () => {
    await ready();
    const state = await show();
    assert.equal(state['ActiveState'], 'active');
    const status = await sh(`cat /proc/${state['MainPID']}/status`);
    assert.doesNotMatch(status, /^Uid:\s+0\s/m, 'not root (DynamicUser)');
    assert.match(status, /^NoNewPrivs:\s+1$/m);
    assert.match(status, /^Seccomp:\s+2$/m, 'a system call filter');
    const res = await fetch(`${url}/PushNotificationMobile.asmx/GetTokenDevice?id=1`);
    assert.equal(res.status, 200);
  });

  it('restarts it after kill -9', async () => {
    const before = await show();
    await sh(`kill -9 ${before['MainPID']}`);
    const after = await eventually(
      async () => {
        const s = await show();
        return s['NRestarts'] === '1' && s['ActiveState'] === 'active' ? s : undefined;
      },
      30_000,
      'the restart',
    );
    assert.notEqual(after['MainPID'], before['MainPID']);
    await ready();
  });

  it('does not restart it after a configuration error', async () => {
    await sh('mkdir -p /etc/sis && echo PORT=eighty > /etc/sis/sis.env && systemctl restart sis || true');
    // failed, not activating (auto-restart): systemd decided at the exit not to restart it.
    const state = await eventually(
      async () => {
        const s = await show();
        return s['ActiveState'] === 'failed' ? s : undefined;
      },
      30_000,
      'the failure',
    );
    assert.equal(state['SubState'], 'failed');
    assert.equal(state['ExecMainStatus'], String(EXIT_STATUS.config));
    assert.equal(state['NRestarts'], '0');
    const journal = await sh('journalctl -u sis --no-pager -o cat');
    assert.match(
      journal,
      /^sis serve: invalid configuration: PORT="eighty": expected a whole number from 0 to 65535$/m,
    );
  });
});
