/**
 * HAProxy running the repository's configuration (deploy/haproxy/haproxy.cfg) on loopback: the
 * listening address and the servers' addresses changed to local ports, nothing else. Skipped with
 * a message where haproxy is not installed.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findExecutable } from '../clients/client-scenario.js';
import { closedPort } from './sms-gateway.js';
import { repoRoot } from './test-server.js';

export const HAPROXY = findExecutable('haproxy') ?? findExecutable('/usr/sbin/haproxy');
export const HAPROXY_SKIP: string | false =
  HAPROXY === null ? 'haproxy not found: install Debian’s haproxy package' : false;

export interface Balancer {
  /** `http://127.0.0.1:PORT`. */
  readonly url: string;
  stop(): void;
}

/** The configuration with `servers` (`sis-1` → `127.0.0.1:PORT`) and a loopback port, as a file's text. */
export function localHaproxyConfig(port: number, servers: Record<string, string>): string {
  const config = readFileSync(join(repoRoot, 'deploy', 'haproxy', 'haproxy.cfg'), 'utf8');
  let text = config.replace(/^(\s*bind) :8080$/m, `$1 127.0.0.1:${port}`);
  for (const [name, address] of Object.entries(servers))
    text = text.replace(new RegExp(`^(\\s*server ${name}) ${name}:8080$`, 'm'), `$1 ${address}`);
  if (!text.includes(`127.0.0.1:${port}`)) throw new Error('deploy/haproxy/haproxy.cfg has no `bind :8080` line');
  return text;
}

/** Starts HAProxy in front of `servers` (host:port by server name). */
export async function startHaproxy(servers: Record<string, string>): Promise<Balancer> {
  if (HAPROXY === null) throw new Error('haproxy not found');
  const port = await closedPort();
  const dir = mkdtempSync(join(tmpdir(), 'sis-haproxy-'));
  const file = join(dir, 'haproxy.cfg');
  writeFileSync(file, localHaproxyConfig(port, servers));
  const child = spawn(HAPROXY, ['-db', '-f', file], { stdio: 'ignore' });
  return {
    url: `http://127.0.0.1:${port}`,
    stop() {
      child.kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
