/**
 * The soak's Redis: a private redis-server on its own port (no snapshots, no append-only file), so
 * a Redis loss is real: `lose()` kills it (what it counted is gone), `restore()` starts an empty
 * one on the same port.
 */
import { spawn, execFileSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '../load/processes.js';

export function redisMissing(): string | null {
  try {
    execFileSync('sh', ['-c', 'command -v redis-server'], { stdio: 'ignore' });
    return null;
  } catch {
    return 'redis-server not on PATH (Debian’s redis-server package)';
  }
}

function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => socket.write('PING\r\n'));
    socket.setTimeout(1000, () => socket.destroy());
    socket.once('data', (d: Buffer) => {
      socket.destroy();
      resolve(d.toString().startsWith('+PONG'));
    });
    socket.once('error', () => resolve(false));
    socket.once('close', () => resolve(false));
  });
}

export class PrivateRedis {
  #child: ChildProcess | null = null;

  private constructor(readonly port: number) {}

  static async start(): Promise<PrivateRedis> {
    const redis = new PrivateRedis(await freePort());
    await redis.restore();
    return redis;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async restore(): Promise<void> {
    const args = ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'];
    this.#child = spawn('redis-server', args, { stdio: 'ignore' });
    const until = Date.now() + 15_000;
    while (!(await ping(this.port))) {
      if (Date.now() > until) throw new Error(`redis-server did not answer on port ${this.port} within 15 s`);
      await sleep(100);
    }
  }

  async lose(): Promise<void> {
    const child = this.#child;
    this.#child = null;
    if (child === null || child.exitCode !== null) return;
    const gone = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await gone;
  }
}
