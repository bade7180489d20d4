/**
 * compose.yaml and its load balancer (deploy/haproxy/haproxy.cfg). The stack itself cannot be
 * started where the PostgreSQL, Redis and HAProxy images cannot be pulled; what can be run here
 * is: the file read as YAML and its wiring checked (the balancer's servers are the instances, the
 * instances trust the stack's network and publish no port, start after healthy dependencies),
 * HAProxy's check of the configuration, and HAProxy itself running that configuration in front of
 * two real instances on one PostgreSQL: when one loses its database it stays ready (/readyz 200,
 * naming it) and in rotation, answering the reads it knows as before (docs/deploying.md).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { parse } from 'yaml';
import { findExecutable, run } from '../clients/client-scenario.js';
import { closedPort as freePort, eventually } from '../helpers/sms-gateway.js';
import { POSTGRES_SKIP, cleanupTargets, newSchema } from '../helpers/store-targets.js';
import { TcpProxy } from '../helpers/tcp-proxy.js';
import { repoRoot, startTestServer } from '../helpers/test-server.js';

const HAPROXY = findExecutable('haproxy') ?? findExecutable('/usr/sbin/haproxy');
const HAPROXY_SKIP = HAPROXY === null ? 'haproxy not found: install Debian’s haproxy package' : false;
const CONFIG = readFileSync(join(repoRoot, 'deploy', 'haproxy', 'haproxy.cfg'), 'utf8');
const dir = mkdtempSync(join(tmpdir(), 'sis-lb-'));
after(async () => {
  rmSync(dir, { recursive: true, force: true });
  await cleanupTargets();
});

interface Service {
  build?: string;
  image?: string;
  read_only?: boolean;
  environment?: Record<string, string>;
  depends_on?: Record<string, { condition: string }> | string[];
  volumes?: string[];
  networks?: string[];
  ports?: string[];
  healthcheck?: { test: string[] };
}

/** The repository's balancer configuration, listening on `port` and sending to `servers` instead of the compose names. */
function localConfig(port: number, servers: Record<string, string>): string {
  let text = CONFIG.replace(/^(\s*bind) :8080$/m, `$1 127.0.0.1:${port}`);
  for (const [name, address] of Object.entries(servers))
    text = text.replace(new RegExp(`^(\\s*server ${name}) ${name}:8080$`, 'm'), `$1 ${address}`);
  assert.notEqual(text, CONFIG);
  const file = join(dir, 'haproxy.cfg');
  writeFileSync(file, text);
  return file;
}

describe('compose.yaml', () => {
  it('wires PostgreSQL, Redis, two instances and the balancer together', () => {
    const compose = parse(readFileSync(join(repoRoot, 'compose.yaml'), 'utf8')) as {
      services: Record<string, Service>;
    };
    const { services } = compose;
    assert.deepEqual(Object.keys(services).sort(), ['lb', 'postgres', 'redis', 'sis-1', 'sis-2']);
    const lb = services['lb']!;
    assert.ok(
      lb.volumes?.some((v) => v.startsWith('./deploy/haproxy/haproxy.cfg:')),
      'the balancer uses the repository’s configuration',
    );
    const servers = [...CONFIG.matchAll(/^\s*server (\S+) (\S+):8080$/gm)].map((m) => [m[1], m[2]]);
    assert.deepEqual(servers, [
      ['sis-1', 'sis-1'],
      ['sis-2', 'sis-2'],
    ]);
    assert.match(CONFIG, /option httpchk GET \/readyz/);
    for (const name of ['sis-1', 'sis-2']) {
      const sis = services[name]!;
      assert.equal(sis.build, '.');
      assert.equal(sis.read_only, true);
      // The balancer's address is the network's choice: every private range is trusted, and only
      // the stack's containers can reach an instance (it publishes no port).
      assert.equal(sis.environment?.['SIS_TRUSTED_PROXIES'], '10.0.0.0/8,172.16.0.0/12,192.168.0.0/16');
      assert.equal(sis.ports, undefined, `${name} publishes no port`);
      assert.match(sis.environment?.['SIS_DATABASE_URL'] ?? '', /^postgres:\/\/sis:.*@postgres:5432\/sis$/);
      assert.equal(sis.environment?.['SIS_REDIS_URL'], 'redis://redis:6379');
      assert.deepEqual(sis.depends_on, {
        postgres: { condition: 'service_healthy' },
        redis: { condition: 'service_healthy' },
      });
    }
    for (const name of ['postgres', 'redis']) assert.ok(services[name]!.healthcheck, `${name} has a health check`);
  });
});

describe('load balancer (HAProxy)', () => {
  it('accepts its configuration', { skip: HAPROXY_SKIP }, async () => {
    const file = localConfig(await freePort(), { 'sis-1': '127.0.0.1:1', 'sis-2': '127.0.0.1:2' });
    const { stdout, stderr } = await run(HAPROXY!, ['-c', '-f', file]);
    assert.match(stdout + stderr, /Configuration file is valid/);
    assert.doesNotMatch(stdout + stderr, /WARNING|ALERT/);
  });

  it(
    'keeps an instance whose database does not answer in rotation: it answers the reads it knows',
    { skip: HAPROXY_SKIP || (POSTGRES_SKIP ?? false), timeout: 120_000 },
    async () => {
      const { url: databaseUrl } = newSchema('lb');
      const target = new URL(databaseUrl);
      const proxy = new TcpProxy(target.hostname, Number(target.port || 5432));
      await proxy.start();
      const viaProxy = new URL(databaseUrl);
      viaProxy.host = `127.0.0.1:${proxy.port}`;
      const env = { SIS_DEMO_DATA: 'true', SIS_SHUTDOWN_GRACE_MS: '0' };
      const second = await startTestServer({ env: { ...env, SIS_DATABASE_URL: databaseUrl } });
      const first = await startTestServer({ env: { ...env, SIS_DATABASE_URL: viaProxy.toString() } });
      const port = await freePort();
      const file = localConfig(port, { 'sis-1': new URL(first.url).host, 'sis-2': new URL(second.url).host });
      const haproxy: ChildProcess = spawn(HAPROXY!, ['-db', '-f', file], { stdio: 'ignore' });
      const lb = `http://127.0.0.1:${port}`;
      const tenAnswers = async (): Promise<number[]> => {
        const statuses: number[] = [];
        for (let i = 0; i < 10; i++) {
          const res = await fetch(`${lb}/PushNotificationMobile.asmx/GetTokenDevice?id=1`).catch(() => null);
          await res?.arrayBuffer();
          statuses.push(res?.status ?? 0);
        }
        return statuses;
      };
      const allOk = async (): Promise<true | undefined> =>
        (await tenAnswers()).every((s) => s === 200) ? true : undefined;
      const served = async (url: string): Promise<number> => {
        const text = await (await fetch(`${url}/metrics`)).text();
        const line = text
          .split('\n')
          .find((l) =>
            l.startsWith(
              'sis_requests_total{service="PushNotificationMobile",operation="GetTokenDevice",binding="httpget",status="200"}',
            ),
          );
        return line === undefined ? 0 : Number(line.split(' ').pop());
      };
      try {
        await eventually(allOk, 30_000, 'both instances in rotation');
        assert.ok((await served(first.url)) > 0 && (await served(second.url)) > 0, 'both instances answered');

        await proxy.stop();
        const readyz = await fetch(`${first.url}/readyz`);
        assert.equal(`${readyz.status} ${await readyz.text()}`, '200 ready (degraded: database unavailable)\n');
        // Three of HAProxy's checks later it is still in rotation, answering the read it knows as before.
        await new Promise((resolve) => setTimeout(resolve, 6000));
        const before = await served(first.url);
        assert.deepEqual(await tenAnswers(), Array(10).fill(200));
        const answered = (await served(first.url)) - before;
        assert.ok(answered >= 3, `round robin: about half answered by the instance without a database (${answered})`);
      } finally {
        haproxy.kill();
        await proxy.stop();
        await first.close();
        await second.close();
      }
    },
  );
});
