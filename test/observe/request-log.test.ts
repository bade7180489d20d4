/**
 * The access log as shipped: buffered lines that are all written out before the process ends (a
 * stop under load, an uncaught exception, a failed start), with stdout a file as a process
 * manager gives it; lines written without a stop when traffic is light; and the sampling of
 * successful request lines.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, describe, it } from 'node:test';
import { eventually } from '../helpers/eventually.js';
import { CLI_MAIN, childEnv } from '../helpers/serve-process.js';
import { startTestServer } from '../helpers/test-server.js';

const dir = mkdtempSync(join(tmpdir(), 'sis-request-log-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const TOKEN_PATH = '/PushNotificationMobile.asmx/GetTokenDevice?id=1';

interface Started {
  readonly port: number;
  readonly logFile: string;
  readonly exited: Promise<number | null>;
  readonly pid: number;
}

/** `sis serve` with stdout a file (opened here, as a supervisor would) and demo data. */
async function serveToFile(
  name: string,
  extra: Record<string, string> = {},
  nodeArgs: string[] = [],
): Promise<Started> {
  const logFile = join(dir, `${name}.log`);
  const fd = openSync(logFile, 'w');
  const port = Number(extra['PORT'] ?? (await freePort()));
  const child = spawn(process.execPath, [...nodeArgs, CLI_MAIN, 'serve'], {
    env: childEnv(`sqlite:${join(dir, `${name}.db`)}`, {
      PORT: String(port),
      HOST: '127.0.0.1',
      SIS_SHUTDOWN_GRACE_MS: '200',
      ...extra,
    }),
    stdio: ['ignore', fd, 'ignore'],
  });
  closeSync(fd);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { port, logFile, exited, pid: child.pid! };
}

async function waitListening(s: Started): Promise<void> {
  await eventually(
    () =>
      assert.ok(
        lines(s.logFile).some((l) => l['msg'] === 'listening'),
        'listening',
      ),
    15_000,
  );
}

function lines(file: string): Record<string, unknown>[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

const requestLines = (file: string): number => lines(file).filter((l) => l['msg'] === 'request').length;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

function get(port: number, agent: Agent): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: TOKEN_PATH, agent }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

/** `clients` keep-alive loops until `stop()`; counts the answers each got in full. */
function load(port: number, clients: number): { answered: () => number; stop: () => Promise<void> } {
  const agent = new Agent({ keepAlive: true, maxSockets: clients });
  let answered = 0;
  let running = true;
  const loops = Array.from({ length: clients }, async () => {
    while (running) {
      try {
        if ((await get(port, agent)) === 200) answered++;
      } catch {
        return; // the server closed: this client is done
      }
    }
  });
  return {
    answered: () => answered,
    stop: async () => {
      running = false;
      await Promise.all(loops);
      agent.destroy();
    },
  };
}

describe('the request log written to a file', () => {
  it('SIGTERM under load: every answered request has its line, and the last line says stopped', async () => {
    const s = await serveToFile('sigterm');
    await waitListening(s);
    const traffic = load(s.port, 16);
    await eventually(() => assert.ok(traffic.answered() >= 2000, `${traffic.answered()} answers so far`), 30_000);
    process.kill(s.pid, 'SIGTERM');
    const code = await s.exited;
    await traffic.stop();
    assert.equal(code, 0);
    assert.equal(requestLines(s.logFile), traffic.answered(), 'one line for each answer, none lost in the buffer');
    assert.equal(lines(s.logFile).at(-1)?.['msg'], 'stopped');
  });

  it('an uncaught exception: the lines before it and a fatal line naming it are written, exit 1', async () => {
    // A preloaded module throws outside any handler of ours when told to (SIGUSR2).
    const preload = join(dir, 'throw-on-usr2.mjs');
    writeFileSync(
      preload,
      "process.on('SIGUSR2', () => setImmediate(() => { throw new Error('test-uncaught-boom'); }));\n",
    );
    const s = await serveToFile('uncaught', {}, ['--import', preload]);
    await waitListening(s);
    const agent = new Agent({ keepAlive: true });
    for (let i = 0; i < 50; i++) assert.equal(await get(s.port, agent), 200);
    agent.destroy();
    process.kill(s.pid, 'SIGUSR2');
    assert.equal(await s.exited, 1);
    assert.equal(requestLines(s.logFile), 50);
    const fatal = lines(s.logFile).find((l) => l['level'] === 60);
    assert.ok(fatal !== undefined, 'a fatal line');
    assert.match(JSON.stringify(fatal), /test-uncaught-boom/);
  });

  it('a failed start (the port is taken): its fatal line is written before the exit', async () => {
    const blocker = createServer().listen(0, '127.0.0.1');
    await new Promise((resolve) => blocker.once('listening', resolve));
    const { port } = blocker.address() as AddressInfo;
    try {
      const s = await serveToFile('port-taken', { PORT: String(port) });
      assert.notEqual(await s.exited, 0);
      assert.ok(
        lines(s.logFile).some((l) => l['level'] === 60),
        readFileSync(s.logFile, 'utf8'),
      );
    } finally {
      blocker.close();
    }
  });

  it('light traffic: a request line reaches the file within a second, without a stop', async () => {
    const s = await serveToFile('light');
    await waitListening(s);
    const agent = new Agent({ keepAlive: false });
    assert.equal(await get(s.port, agent), 200);
    await eventually(() => assert.equal(requestLines(s.logFile), 1), 3000);
    process.kill(s.pid, 'SIGTERM');
    assert.equal(await s.exited, 0);
  });
});

describe('SIS_LOG_SUCCESS_SAMPLE', () => {
  for (const [sample, expected] of [
    ['5', 4],
    ['0', 0],
    ['1', 20],
  ] as const) {
    it(`${sample}: ${expected} of 20 successful request lines, and every error`, async () => {
      const logged: Record<string, unknown>[] = [];
      const stream = new Writable({
        write(chunk: Buffer, _enc, done) {
          for (const l of chunk.toString().split('\n'))
            if (l !== '') logged.push(JSON.parse(l) as Record<string, unknown>);
          done();
        },
      });
      const server = await startTestServer({
        env: { LOG_LEVEL: 'info', SIS_LOG_SUCCESS_SAMPLE: sample },
        logDestination: stream,
      });
      try {
        for (let i = 0; i < 20; i++) assert.equal((await fetch(`${server.url}${TOKEN_PATH}`)).status, 200);
        assert.equal((await fetch(`${server.url}/Nope.asmx`)).status, 404);
        assert.equal((await fetch(`${server.url}/PushNotificationMobile.asmx/Nope`)).status, 500);
        assert.equal(
          (
            await fetch(`${server.url}/PushNotificationMobile.asmx`, {
              method: 'POST',
              body: '<not-xml',
              headers: { 'Content-Type': 'text/xml; charset=utf-8', SOAPAction: '"http://tempuri.org/GetTokenDevice"' },
            })
          ).status,
          400,
        );
      } finally {
        await server.close();
      }
      const requests = logged.filter((l) => l['msg'] === 'request');
      assert.equal(requests.filter((l) => l['status'] === 200).length, expected);
      assert.deepEqual(
        requests.filter((l) => l['status'] !== 200).map((l) => l['status']),
        [404, 500, 400],
      );
    });
  }
});
