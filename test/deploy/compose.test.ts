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
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { IncomingHttpHeaders } from 'node:http';
import { BlockList, isIP } from 'node:net';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { parse } from 'yaml';
import { run } from '../clients/client-scenario.js';
import {
  BALANCER_CONFIG as CONFIG,
  HAPROXY,
  HAPROXY_SKIP,
  localConfig,
  removeBalancerFiles,
  requestFrom,
  startBalancer,
} from '../helpers/balancer.js';
import { rawRequest } from '../helpers/raw-http.js';
import { refusals, saudiMobiles } from '../helpers/sms-calls.js';
import { closedPort as freePort, eventually } from '../helpers/sms-gateway.js';
import { POSTGRES_SKIP, cleanupTargets, newSchema } from '../helpers/store-targets.js';
import { TcpProxy } from '../helpers/tcp-proxy.js';
import { repoRoot, startTestServer } from '../helpers/test-server.js';

after(async () => {
  removeBalancerFiles();
  await cleanupTargets();
});

interface Service {
  build?: string;
  image?: string;
  read_only?: boolean;
  environment?: Record<string, string>;
  depends_on?: Record<string, { condition: string }> | string[];
  volumes?: string[];
  networks?: string[] | Record<string, { ipv4_address?: string }>;
  ports?: string[];
  command?: string[];
  healthcheck?: { test: string[] };
}

const COMPOSE_TEXT = readFileSync(join(repoRoot, 'compose.yaml'), 'utf8');
const compose = parse(COMPOSE_TEXT) as {
  services: Record<string, Service>;
  networks: Record<string, { ipam?: { config?: { subnet?: string }[] } } | null>;
};

describe('compose.yaml', () => {
  it('wires PostgreSQL, Redis, two instances and the balancer together', () => {
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
      assert.equal(sis.ports, undefined, `${name} publishes no port`);
      assert.match(sis.environment?.['SIS_DATABASE_URL'] ?? '', /^postgres:\/\/sis:.*@postgres:5432\/sis$/);
      assert.deepEqual(sis.depends_on, {
        postgres: { condition: 'service_healthy' },
        redis: { condition: 'service_healthy' },
      });
    }
    for (const name of ['postgres', 'redis']) assert.ok(services[name]!.healthcheck, `${name} has a health check`);
  });

  it('has the instances trust the balancer alone, at its fixed address on a network of its own', () => {
    const { services, networks } = compose;
    const lbNetworks = services['lb']!.networks as Record<string, { ipv4_address?: string }>;
    assert.deepEqual(Object.keys(lbNetworks), ['edge'], 'the balancer is on the edge network only');
    const address = lbNetworks['edge']!.ipv4_address;
    assert.ok(address !== undefined && isIP(address) === 4, 'the balancer has a fixed address');
    const subnet = networks['edge']?.ipam?.config?.[0]?.subnet ?? '';
    const [base, bits] = subnet.split('/');
    assert.ok(Number(bits) >= 28, `a small subnet (${subnet})`);
    const edge = new BlockList();
    edge.addSubnet(base!, Number(bits));
    assert.ok(edge.check(address), `${address} is in ${subnet}`);
    for (const name of ['sis-1', 'sis-2']) {
      const sis = services[name]!;
      assert.equal(sis.environment?.['SIS_TRUSTED_PROXIES'], address, `${name} trusts the balancer only`);
      assert.deepEqual([...(sis.networks as string[])].sort(), ['edge', 'sis']);
    }
    for (const name of ['postgres', 'redis']) assert.deepEqual(services[name]!.networks, ['sis']);
  });

  it('refuses to start without its passwords, and Redis asks for one', () => {
    // Every use of a secret is `${NAME:?message}`: compose stops with the message when it is unset.
    const uses = [...COMPOSE_TEXT.matchAll(/\$\{(SIS_(?:DB|REDIS)_PASSWORD)([^}]*)\}/g)];
    assert.deepEqual([...new Set(uses.map((m) => m[1]))].sort(), ['SIS_DB_PASSWORD', 'SIS_REDIS_PASSWORD']);
    for (const [use, , rest] of uses) assert.match(rest!, /^:\?\S/, `${use} is required, with a message`);
    const password = '${SIS_REDIS_PASSWORD:?set SIS_REDIS_PASSWORD (letters and digits)}';
    const command = compose.services['redis']!.command ?? [];
    assert.equal(command[command.indexOf('--requirepass') + 1], password);
    assert.equal(compose.services['redis']!.environment?.['REDISCLI_AUTH'], password, 'the health check logs in');
    for (const name of ['sis-1', 'sis-2'])
      assert.equal(compose.services[name]!.environment?.['SIS_REDIS_URL'], `redis://:${password}@redis:6379`);
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

/** Everything a client might write about its own address, scheme and host. */
const FORGED: Record<string, string> = {
  'X-Forwarded-For': '198.51.100.7',
  'X-Forwarded-Host': 'evil.example',
  'X-Forwarded-Proto': 'https',
  'X-Forwarded-Port': '443',
  'X-Forwarded-Server': 'evil.example',
  Forwarded: 'for=198.51.100.7;host=evil.example;proto=https',
  'X-Real-IP': '198.51.100.7',
  'X-Client-IP': '198.51.100.7',
  'True-Client-IP': '198.51.100.7',
  'X-Original-URL': '/metrics',
  'X-Rewrite-URL': '/metrics',
};

describe('load balancer (HAProxy): no client chooses its own address', () => {
  it(
    'passes on the real source as X-Forwarded-For and nothing a client says about itself',
    { skip: HAPROXY_SKIP },
    async () => {
      const seen: IncomingHttpHeaders[] = [];
      const backend = createServer((req, res) => {
        if (req.url !== '/readyz') seen.push(req.headers);
        res.end('ok');
      });
      await new Promise<void>((resolve) => backend.listen(0, '127.0.0.1', resolve));
      const lb = await startBalancer({
        'sis-1': `127.0.0.1:${(backend.address() as AddressInfo).port}`,
        'sis-2': '127.0.0.1:1',
      });
      try {
        seen.length = 0;
        const headers = {
          ...FORGED,
          'X-Shadow-Route': 'legacy',
          traceparent: `00-${'a'.repeat(32)}-${'b'.repeat(16)}-01`,
        };
        assert.equal((await requestFrom('127.0.0.6', `${lb.url}/PushNotificationMobile.asmx`, headers)).status, 200);
        assert.equal(seen.length, 1);
        const got = seen[0]!;
        assert.equal(got['x-forwarded-for'], '127.0.0.6', 'replaced by the connection’s source, not appended to');
        for (const name of Object.keys(FORGED).filter((n) => n !== 'X-Forwarded-For'))
          assert.equal(got[name.toLowerCase()], undefined, `${name} is dropped`);
        // The service's own business: it judges the tester by the address above.
        assert.equal(got['x-shadow-route'], 'legacy');
        assert.equal(got['traceparent'], headers.traceparent);
      } finally {
        lb.close();
        await new Promise((resolve) => backend.close(resolve));
      }
    },
  );

  // compose's way (the instances trust the balancer's one address) and the way compose trusted
  // before (every private range: under rootless podman every client has such an address, as every
  // client here has one of 127.0.0.0/8): either way, a forged header changes nothing.
  for (const trust of [
    { name: 'the balancer’s address', proxies: '127.0.0.2', source: '127.0.0.2' },
    { name: 'every address clients come from', proxies: '127.0.0.0/8', source: undefined },
  ]) {
    it(
      `keeps the gate, the WSDL and the SMS address counter on the real client (trusting ${trust.name})`,
      { skip: HAPROXY_SKIP, timeout: 60_000 },
      async () => {
        const server = await startTestServer({
          env: {
            SIS_DEMO_DATA: 'true',
            SIS_TRUSTED_PROXIES: trust.proxies,
            SIS_ALLOW_FROM: '127.0.0.5, 198.51.100.7',
            SIS_ALLOW_FROM_SERVICES: 'PushNotificationMobile',
            SIS_AUTH_CODES_PER_ADDRESS_HOUR: '2',
            SIS_SMS_DEFAULT_REGION: 'SA',
          },
        });
        const lb = await startBalancer({ 'sis-1': new URL(server.url).host, 'sis-2': '127.0.0.1:1' }, trust.source);
        try {
          const token = `${lb.url}/PushNotificationMobile.asmx/GetTokenDevice?id=1`;
          assert.equal((await requestFrom('127.0.0.5', token)).status, 200, 'the listed client is let in');
          assert.equal((await requestFrom('127.0.0.6', token)).status, 403);
          for (const forged of ['198.51.100.7', '127.0.0.5', '127.0.0.5, 127.0.0.2', 'not-an-address-1'])
            assert.equal(
              (await requestFrom('127.0.0.6', token, { 'X-Forwarded-For': forged })).status,
              403,
              `X-Forwarded-For: ${forged}`,
            );
          assert.equal((await requestFrom('127.0.0.6', token, FORGED)).status, 403);

          const wsdl = await requestFrom('127.0.0.6', `${lb.url}/NotificationNotes.asmx?WSDL`, {
            ...FORGED,
            Host: 'sis.example.org',
          });
          assert.equal(wsdl.status, 200);
          assert.match(wsdl.body, /location="http:\/\/sis\.example\.org\/NotificationNotes\.asmx"/);
          assert.doesNotMatch(wsdl.body, /evil\.example|https:/);

          // Two codes an hour per address: a third from the same client is refused whatever it forges.
          const phones = saudiMobiles(3, 33, '+9665000');
          const statuses: number[] = [];
          for (const [i, phone] of phones.entries()) {
            const query = `code=12345${i}&phone=%2B966${phone}`;
            const res = await requestFrom('127.0.0.7', `${lb.url}/AuthCodeSending.asmx/AuthCode?${query}`, {
              'X-Forwarded-For': `203.0.113.${i + 1}`,
            });
            statuses.push(res.status);
          }
          assert.deepEqual(statuses, [200, 200, 500]);
          assert.equal((await refusals(server.url)).get('address'), 1);
        } finally {
          lb.close();
          await server.close();
        }
      },
    );
  }
});

describe('load balancer (HAProxy): what it serves to the outside', () => {
  it(
    'hides the instances’ ops endpoints, answers /readyz itself, and passes absolute-form targets and CONNECT on',
    { skip: HAPROXY_SKIP, timeout: 60_000 },
    async () => {
      const server = await startTestServer({ env: { SIS_DEMO_DATA: 'true' } });
      const lb = await startBalancer({ 'sis-1': new URL(server.url).host, 'sis-2': '127.0.0.1:1' });
      try {
        const before = (await (await fetch(`${server.url}/metrics`)).text()).length;
        assert.ok(before > 0);
        for (const path of ['/metrics', '/metrics?x=1', '/healthz', 'http://sis.example.org/metrics']) {
          const res = await rawRequest(lb.url, { method: 'GET', path, headers: [['Host', 'sis.example.org']] });
          assert.equal(res.status, 404, path);
          assert.doesNotMatch(res.body.toString(), /sis_|process_/, `${path}: no metric`);
        }
        // The balancer's own: 200 while an instance is in rotation (the instance's /readyz is not asked).
        const ready = await rawRequest(lb.url, { method: 'GET', path: '/readyz' });
        assert.equal(ready.status, 200);
        assert.equal(ready.headers.get('x-request-id'), undefined, 'answered by the balancer');

        const wsdl = await rawRequest(lb.url, {
          method: 'GET',
          path: 'http://sis.example.org/NotificationNotes.asmx?WSDL',
          headers: [['Host', 'sis.example.org']],
        });
        assert.equal(wsdl.status, 200, 'an absolute-form target is served like its path');
        assert.match(wsdl.body.toString(), /location="http:\/\/sis\.example\.org\/NotificationNotes\.asmx"/);

        const connect = await rawRequest(lb.url, {
          method: 'CONNECT',
          path: 'sis.example.org:443',
          headers: [['Host', 'sis.example.org:443']],
        });
        assert.equal(connect.status, 405);
        assert.equal(connect.headers.get('allow'), 'GET, HEAD, POST');
      } finally {
        lb.close();
        await server.close();
      }
    },
  );
});
