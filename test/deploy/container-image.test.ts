/**
 * The container image (Dockerfile), built and run for real with podman: a SOAP call answered, the
 * service not root and the root filesystem read-only, the health check through /readyz, the data
 * on the volume kept across a replaced container, SIGTERM → exit 0 within the stop grace period,
 * a bad setting → the documented status and its one line in the log, no npm or compilers inside,
 * no native module among its dependencies (SQLite is Node's own node:sqlite).
 * Skipped with a message where podman is missing or cannot run containers.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { EXIT_STATUS } from '../../src/app/startup-failure-report.js';
import { eventually } from '../helpers/sms-gateway.js';
import { IMAGE, buildImage, podman, podmanMissing, podmanStatus } from './podman.js';

const SKIP = await podmanMissing();
const tag = randomBytes(4).toString('hex');
const volume = `sis-test-data-${tag}`;
const containers: string[] = [];

const GET_TOKEN_DEVICE =
  '<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/">' +
  '<soap:Body><GetTokenDevice xmlns="http://tempuri.org/"><id>1</id></GetTokenDevice></soap:Body></soap:Envelope>';

/** Starts the image as the documentation says (read-only root, the volume at /data); returns its name and URL. */
async function start(extra: readonly string[] = []): Promise<{ name: string; url: string }> {
  const name = `sis-test-${tag}-${containers.length}`;
  containers.push(name);
  await podman([
    'run',
    '-d',
    '--name',
    name,
    '--read-only',
    '-p',
    '127.0.0.1::8080',
    '-v',
    `${volume}:/data`,
    ...extra,
    IMAGE,
  ]);
  const port = (await podman(['port', name, '8080'])).stdout.trim().split(':').pop();
  const url = `http://127.0.0.1:${port}`;
  await eventually(
    async () => ((await fetch(`${url}/readyz`).catch(() => null))?.ok === true ? true : undefined),
    30_000,
    `${name} ready`,
  );
  return { name, url };
}

async function metric(url: string, name: string): Promise<number | undefined> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.slice(name.length + 1));
}

describe('container image (podman)', { skip: SKIP, timeout: 1_800_000 }, () => {
  before(() => buildImage(), { timeout: 1_500_000 });
  after(async () => {
    for (const name of containers) await podmanStatus(['rm', '-f', '-v', '-t', '0', name]);
    await podmanStatus(['volume', 'rm', '-f', volume]);
  });

  it('runs as a non-root user with a health check and no npm or compilers', async () => {
    const config = JSON.parse((await podman(['image', 'inspect', IMAGE])).stdout) as {
      Config: { User: string; Entrypoint: string[] };
      /** podman keeps it beside Config (and only when built with --format docker). */
      Healthcheck?: { Test: string[] };
    }[];
    const c = config[0]!.Config;
    assert.equal(c.User, 'node');
    assert.deepEqual(c.Entrypoint, ['node', 'dist/src/cli/main.js'], 'exec form: SIGTERM reaches node');
    assert.match(config[0]!.Healthcheck?.Test.join(' ') ?? '', /\/readyz/);
    const tools = await podmanStatus([
      'run',
      '--rm',
      '--entrypoint',
      'sh',
      IMAGE,
      '-c',
      'command -v npm npx gcc g++ make python3 curl',
    ]);
    assert.equal(tools.stdout.trim(), '', 'none of these in the final image');
  });

  it('has no native module among its dependencies (nothing was compiled for it)', async () => {
    const probe = await podmanStatus([
      'run',
      '--rm',
      '--entrypoint',
      'node',
      IMAGE,
      '-e',
      "const fs = require('node:fs');" +
        "const all = fs.readdirSync('node_modules', { recursive: true }).map(String);" +
        "process.stdout.write(JSON.stringify([all.length > 100, all.filter((f) => f.endsWith('.node'))]));",
    ]);
    assert.equal(probe.code, 0, probe.stderr);
    assert.equal(probe.stdout, '[true,[]]', 'the production dependencies are there, and none is a compiled addon');
  });

  it('answers SOAP, passes its health check, keeps its data across a replaced container and stops with 0', async () => {
    const first = await start();
    const soap = await fetch(`${first.url}/PushNotificationMobile.asmx`, {
      method: 'POST',
      headers: { 'content-type': 'text/xml; charset=utf-8', soapaction: '"http://tempuri.org/GetTokenDevice"' },
      body: GET_TOKEN_DEVICE,
    });
    assert.equal(soap.status, 200);
    assert.match(await soap.text(), /<GetTokenDeviceResult>.+<\/GetTokenDeviceResult>/);
    assert.equal((await podman(['exec', first.name, 'id', '-u'])).stdout.trim(), '1000');
    const health = await podmanStatus(['healthcheck', 'run', first.name]);
    assert.equal(health.code, 0, health.stderr);

    // A write (a code queued for SMS) ...
    const code = await fetch(`${first.url}/AuthCodeSending.asmx/AuthCode?code=482913&phone=%2B966501234567`);
    assert.equal(code.status, 200, await code.text());
    assert.equal(await metric(first.url, 'sis_outbox_pending_messages'), 1);
    // ... stops gracefully within the runtime's grace period: a kill at its end would be 137.
    await podman(['stop', '-t', '10', first.name]);
    assert.equal((await podman(['inspect', first.name, '--format', '{{.State.ExitCode}}'])).stdout.trim(), '0');
    assert.match((await podmanStatus(['logs', first.name])).stdout, /"clean":true,"msg":"stopped"/);
    await podman(['rm', first.name]);

    // ... and is still there for the container that replaces it.
    const second = await start();
    assert.equal(await metric(second.url, 'sis_outbox_pending_messages'), 1);
    await podman(['stop', '-t', '10', second.name]);
  });

  it('exits with the configuration status and one line in its log on a bad setting', async () => {
    const name = `sis-test-${tag}-bad`;
    containers.push(name);
    const result = await podmanStatus(['run', '--name', name, '--read-only', '-e', 'PORT=eighty', IMAGE]);
    assert.equal(result.code, EXIT_STATUS.config);
    const lines = (await podmanStatus(['logs', name])).stderr.split('\n').filter((l) => l.startsWith('sis serve:'));
    assert.deepEqual(lines, [
      'sis serve: invalid configuration: PORT="eighty": expected a whole number from 0 to 65535',
    ]);
  });
});
