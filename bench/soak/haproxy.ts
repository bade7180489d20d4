/**
 * The repository's balancer (deploy/haproxy/haproxy.cfg) in front of the soak's instances: the
 * listening address and the servers' addresses changed to local ports, nothing else.
 */
import { execFileSync, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT, freePort } from '../load/processes.js';

export function haproxyPath(): string | null {
  for (const candidate of ['haproxy', '/usr/sbin/haproxy'])
    try {
      return execFileSync('sh', ['-c', `command -v ${candidate}`], { encoding: 'utf8' }).trim() || null;
    } catch {
      // next
    }
  return null;
}

export interface SoakBalancer {
  readonly url: string;
  stop(): void;
}

/** Starts HAProxy with its configuration written in `dir`, in front of `servers` (name → host:port). */
export async function startBalancer(dir: string, servers: Record<string, string>): Promise<SoakBalancer> {
  const port = await freePort();
  let text = readFileSync(join(REPO_ROOT, 'deploy', 'haproxy', 'haproxy.cfg'), 'utf8').replace(
    /^(\s*bind) :8080$/m,
    `$1 127.0.0.1:${port}`,
  );
  for (const [name, address] of Object.entries(servers))
    text = text.replace(new RegExp(`^(\\s*server ${name}) ${name}:8080$`, 'm'), `$1 ${address}`);
  if (!text.includes(`127.0.0.1:${port}`)) throw new Error('deploy/haproxy/haproxy.cfg has no `bind :8080` line');
  const file = join(dir, 'haproxy.cfg');
  writeFileSync(file, text);
  const child: ChildProcess = spawn(haproxyPath()!, ['-db', '-f', file], { stdio: 'ignore' });
  return { url: `http://127.0.0.1:${port}`, stop: () => void child.kill() };
}
