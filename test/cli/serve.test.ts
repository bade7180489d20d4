/**
 * The real CLI under load: graceful shutdown (SIGTERM mid-load from many keep-alive clients,
 * requests on idle keep-alive connections during the drain, a request whose body is still on
 * its way) and --workers 2. Spawns `node dist/src/cli/main.js serve`.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import type { IncomingHttpHeaders } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { repoRoot } from '../helpers/test-server.js';

const MAIN = join(repoRoot, 'dist', 'src', 'cli', 'main.js');
const GET_PATH = '/PushNotificationMobile.asmx/GetTokenDevice?id=1';
const dirs: string[] = [];
after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

interface Served {
  readonly child: ChildProcess;
  readonly port: number;
  readonly lines: Record<string, unknown>[];
  readonly exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts `sis serve` and resolves once `listeners` processes log "listening". */
async function serve(env: Record<string, string>, args: string[] = [], listeners = 1): Promise<Served> {
  const dir = mkdtempSync(join(tmpdir(), 'sis-cli-'));
  dirs.push(dir);
  const port = await freePort();
  const base = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith('SIS_') && k !== 'PORT' && k !== 'HOST'),
  );
  const child = spawn(process.execPath, [MAIN, 'serve', ...args], {
    env: {
      ...base,
      PORT: String(port),
      HOST: '127.0.0.1',
      SIS_DATABASE_URL: `sqlite:${join(dir, 'sis.db')}`,
      LOG_LEVEL: 'info',
      SIS_LOG_FORMAT: 'json',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: Record<string, unknown>[] = [];
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    // 'close', not 'exit': the last log lines may still be in the pipe at exit.
    child.on('close', (code, signal) => resolve({ code, signal })),
  );
  await new Promise<void>((resolve, reject) => {
    let pending = '';
    let ready = 0;
    child.stdout!.on('data', (d: Buffer) => {
      pending += d.toString();
      let nl: number;
      while ((nl = pending.indexOf('\n')) >= 0) {
        const line = JSON.parse(pending.slice(0, nl)) as Record<string, unknown>;
        pending = pending.slice(nl + 1);
        lines.push(line);
        if (line['msg'] === 'listening' && ++ready === listeners) resolve();
      }
    });
    void exit.then(({ code }) => reject(new Error(`serve exited with ${code} before listening: ${stderr}`)));
  });
  return { child, port, lines, exit };
}

interface Answer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  readonly reused: boolean;
}

function get(port: number, path: string, agent: Agent | false, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body, reused: req.reusedSocket }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

interface Load {
  ok: number;
  /** Clients answered at least once: their connections are accepted. */
  started: number;
  closeAnswers: number;
  /** Requests refused before being sent (the port is closed): expected once draining. */
  refused: number;
  /** Anything else: a request lost mid-way, a 503, a wrong answer. */
  failures: string[];
}

/** `clients` loops of keep-alive GETs until the port refuses them. */
function load(port: number, clients: number, agent: Agent): { result: Load; done: Promise<void> } {
  const result: Load = { ok: 0, started: 0, closeAnswers: 0, refused: 0, failures: [] };
  const loop = async (): Promise<void> => {
    for (let first = true; ; first = false) {
      try {
        const a = await get(port, GET_PATH, agent);
        if (a.status !== 200 || !a.body.includes('tok-AAA-111'))
          result.failures.push(`status ${a.status}: ${a.body.slice(0, 80)}`);
        else result.ok++;
        if (first) result.started++;
        if (a.headers.connection === 'close') result.closeAnswers++;
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'ECONNREFUSED') result.refused++;
        else result.failures.push(`${code ?? ''} ${(err as Error).message}`);
        return;
      }
    }
  };
  return { result, done: Promise.all(Array.from({ length: clients }, loop)).then(() => undefined) };
}

/**
 * Waits until every client has been answered (so each connection is accepted: one still in the
 * kernel's queue when the port closes is reset, a race no server can win) and load is going.
 */
async function underLoad(result: Load, clients: number, min: number): Promise<void> {
  while (result.started < clients || result.ok < min) {
    if (result.failures.length > 0) return;
    await sleep(20);
  }
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('sis serve: graceful shutdown', () => {
  it('answers every request under keep-alive load, those arriving during the drain too, then exits 0', async () => {
    const s = await serve({ SIS_SHUTDOWN_GRACE_MS: '1500' });
    const agent = new Agent({ keepAlive: true, maxSockets: 24 });
    const idleAgent = new Agent({ keepAlive: true, maxSockets: 1 });
    // A connection that sits idle across the signal and is used during the grace period.
    assert.equal((await get(s.port, GET_PATH, idleAgent)).status, 200);
    // The slow request below goes on a connection the server has accepted already: one still in
    // the kernel's queue when the port closes would be reset, a race no server can win.
    const slowAgent = new Agent({ keepAlive: true, maxSockets: 1 });
    assert.equal((await get(s.port, GET_PATH, slowAgent)).status, 200);
    const { result, done } = load(s.port, 24, agent);
    await underLoad(result, 24, 200);
    // A request already received whose body is still arriving when the signal comes.
    const slow = new Promise<Answer>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port: s.port,
          method: 'POST',
          path: '/PushNotificationMobile.asmx/GetTokenDevice',
          agent: slowAgent,
          headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'Content-Length': '4' },
        },
        (res) => {
          let body = '';
          res.on('data', (c: Buffer) => (body += c.toString()));
          res.on('end', () =>
            resolve({ status: res.statusCode ?? 0, headers: res.headers, body, reused: req.reusedSocket }),
          );
        },
      );
      req.on('error', reject);
      req.write('id');
      setTimeout(() => req.end('=1'), 700);
    });
    slow.catch(() => undefined); // awaited below; a failure should fail there, not as unhandled
    await sleep(100);
    const okBefore = result.ok;
    s.child.kill('SIGTERM');
    await sleep(400);
    const late = await get(s.port, GET_PATH, idleAgent);
    const ready = await get(s.port, '/readyz', false).catch((err: NodeJS.ErrnoException) => err.code);
    await done;
    const slowAnswer = await slow;
    const { code, signal } = await s.exit;
    agent.destroy();
    idleAgent.destroy();
    slowAgent.destroy();

    assert.deepEqual(result.failures, [], 'no request failed mid-way');
    assert.ok(okBefore >= 200, `load was running (${okBefore} answers before the signal)`);
    assert.ok(result.closeAnswers > 0, 'answers during the drain carry Connection: close');
    assert.equal(late.status, 200, 'a request on an idle keep-alive connection during the grace period is answered');
    assert.equal(late.reused, true, 'on the connection opened before the signal');
    assert.equal(late.headers.connection, 'close');
    assert.equal(ready, 'ECONNREFUSED', 'new connections are refused while draining');
    assert.equal(slowAnswer.status, 200, 'the request whose body was still arriving is answered');
    assert.match(slowAnswer.body, /tok-AAA-111/);
    assert.equal(slowAnswer.reused, true);
    assert.deepEqual({ code, signal }, { code: 0, signal: null });
    const logged = s.lines.filter((l) => l['msg'] === 'request').length;
    assert.equal(
      logged,
      result.ok + 4,
      'every answer is logged (load, the idle connection twice, the slow connection twice)',
    );
    assert.deepEqual(s.lines.at(-1)?.['clean'], true);
  });

  it('a bad setting stops the start with one line per problem and exit 78 (EX_CONFIG)', async () => {
    const child = spawn(process.execPath, [MAIN, 'serve'], {
      env: {
        PATH: process.env['PATH'] ?? '',
        PORT: 'eighty',
        SIS_RATE_LIMIT: 'lots',
        SIS_ALLOW_FROM: '10.0.0.0/33',
        SIS_WORKERS: '0',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    assert.equal(code, 78);
    const problems = stderr.split('\n').filter((l) => l !== '');
    assert.equal(problems.length, 4, stderr);
    for (const line of problems) assert.match(line, /^sis serve: invalid configuration: /);
    for (const name of ['PORT', 'SIS_RATE_LIMIT', 'SIS_ALLOW_FROM', 'SIS_WORKERS'])
      assert.ok(
        problems.some((p) => p.includes(name)),
        name,
      );
  });
});

describe('sis serve --workers 2', () => {
  it('serves from two worker processes, aggregates their metrics, and drains both on SIGTERM', async () => {
    const s = await serve({ SIS_DEBUG_HEADERS: 'true', SIS_SHUTDOWN_GRACE_MS: '1000' }, ['--workers', '2'], 2);
    const pids = new Set<string>();
    for (let i = 0; i < 30; i++) {
      const a = await get(s.port, GET_PATH, false);
      assert.equal(a.status, 200);
      pids.add(String(a.headers['x-sis-worker-pid']));
    }
    assert.equal(pids.size, 2, `two workers answered: ${[...pids].join(', ')}`);
    assert.ok(!pids.has(String(s.child.pid)), 'the primary serves no request itself');

    const metrics = await get(s.port, '/metrics', false);
    assert.equal(metrics.status, 200);
    const line = metrics.body
      .split('\n')
      .find((l) => l.startsWith('sis_requests_total{') && l.includes('binding="httpget"'));
    assert.equal(line?.split(' ').at(-1), '30', `the workers' counts are summed: ${line}`);

    const agent = new Agent({ keepAlive: true, maxSockets: 16 });
    const { result, done } = load(s.port, 16, agent);
    await underLoad(result, 16, 200);
    s.child.kill('SIGTERM');
    await done;
    const { code } = await s.exit;
    agent.destroy();
    assert.deepEqual(result.failures, []);
    assert.ok(result.ok >= 200, `${result.ok} answers`);
    assert.equal(code, 0);
    const stopped = s.lines.filter((l) => l['msg'] === 'stopped');
    assert.equal(stopped.length, 3, `both workers and the primary stopped: ${JSON.stringify(s.lines.slice(-8))}`);
  });
});
