import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { after, describe, it } from 'node:test';
import { rawRequest } from '../helpers/raw-http.js';
import { POSTGRES_SKIP, cleanupTargets, newSchema, postgresUrl } from '../helpers/store-targets.js';
import { TcpProxy } from '../helpers/tcp-proxy.js';
import { repoRoot } from '../helpers/test-server.js';

/**
 * PostgreSQL unreachable at start: the real service starts anyway, reports not ready and answers
 * the documented server fault while it retries with back-off, and serves once the database is up.
 */
describe('start-up while PostgreSQL is unreachable', { skip: POSTGRES_SKIP ?? false }, () => {
  after(() => cleanupTargets());

  it('retries, reports not ready, then serves', { timeout: 60_000 }, async () => {
    const target = new URL(postgresUrl);
    const proxy = new TcpProxy(target.hostname, Number(target.port || 5432));
    const port = await proxy.start();
    await proxy.stop(); // the port is known and closed: the database is "down"
    const { url } = newSchema('startup');
    const viaProxy = new URL(url);
    viaProxy.host = `127.0.0.1:${port}`;
    const env: NodeJS.ProcessEnv = {};
    for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('SIS_')) env[k] = v;
    const child = spawn(process.execPath, [`${repoRoot}dist/src/cli/main.js`, 'serve'], {
      env: {
        ...env,
        SIS_DATABASE_URL: viaProxy.toString(),
        PORT: '0',
        HOST: '127.0.0.1',
        LOG_LEVEL: 'info',
        SIS_LOG_FORMAT: 'json',
        SIS_SHUTDOWN_GRACE_MS: '0',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      const logs: Record<string, unknown>[] = [];
      const serviceUrl = await listening(child, logs);
      const notReady = await rawRequest(serviceUrl, { method: 'GET', path: '/readyz' });
      assert.equal(notReady.status, 503);
      const fault = await rawRequest(serviceUrl, {
        method: 'GET',
        path: '/PushNotificationMobile.asmx/GetTokenDevice?id=1',
      });
      assert.equal(fault.status, 500);
      assert.match(
        fault.body.toString(),
        /^The service could not complete the request\. The error has been logged\.\r\n$/,
      );
      await waitFor(
        () =>
          logs.some((l) =>
            String(l['msg']).startsWith('database unavailable: not reachable at start; the service listens anyway'),
          ),
        10_000,
      );

      await proxy.start(); // the database is back
      await waitFor(
        async () => (await rawRequest(serviceUrl, { method: 'GET', path: '/readyz' })).status === 200,
        20_000,
      );
      const ok = await rawRequest(serviceUrl, {
        method: 'GET',
        path: '/PushNotificationMobile.asmx/GetTokenDevice?id=1',
      });
      assert.equal(ok.status, 200);
      assert.match(ok.body.toString(), /tok-AAA-111/, 'demo data was loaded once the database answered');
    } finally {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
      await proxy.stop();
    }
  });
});

function listening(child: ChildProcess, logs: Record<string, unknown>[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no "listening" line within 15 s')), 15_000);
    child.once('exit', (code) => reject(new Error(`exited with ${code} before listening`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      try {
        const entry = JSON.parse(line) as Record<string, unknown>;
        logs.push(entry);
        if (entry['msg'] === 'listening') {
          clearTimeout(timer);
          resolve(entry['url'] as string);
        }
      } catch {
        // not a log line
      }
    });
  });
}

async function waitFor(check: () => boolean | Promise<boolean>, ms: number): Promise<void> {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`condition not met within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
