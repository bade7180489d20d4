/**
 * A redis-server of the test's own (never the machine's shared one), on its own port and keeping
 * nothing on disk, so a test can stop it (Redis lost, its counts with it) and start it again.
 */
import { execFileSync, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';

function redisServerPath(): string | null {
  try {
    return execFileSync('sh', ['-c', 'command -v redis-server'], { encoding: 'utf8' }).trim() || null;
  } catch {
    return null;
  }
}

export const REDIS_SERVER = redisServerPath();

/** Why a test that needs its own Redis is skipped, or false. */
export const PRIVATE_REDIS_SKIP: string | false =
  REDIS_SERVER === null ? 'redis-server is not installed (Debian’s redis-server package): skipped' : false;

/** Starts redis-server on `port`; resolves once it takes connections. */
export async function startRedis(port: number): Promise<ChildProcess> {
  const child = spawn(
    REDIS_SERVER!,
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: ['ignore', 'pipe', 'ignore'] },
  );
  await new Promise<void>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('Ready to accept connections')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`redis-server exited with ${code}: ${out}`)));
  });
  return child;
}

/** Stops it (SIGTERM) and waits for it to exit; nothing it counted survives. */
export async function stopRedis(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}
