/**
 * The repository's load balancer (deploy/haproxy/haproxy.cfg) run here by Debian's haproxy, in
 * front of local instances instead of compose's: for the tests of compose.yaml's stack and of
 * what the balancer logs.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findExecutable } from '../clients/client-scenario.js';
import { closedPort as freePort, eventually } from './sms-gateway.js';
import { repoRoot } from './test-server.js';

export const HAPROXY = findExecutable('haproxy') ?? findExecutable('/usr/sbin/haproxy');
export const HAPROXY_SKIP = HAPROXY === null ? 'haproxy not found: install Debian’s haproxy package' : false;
export const BALANCER_CONFIG = readFileSync(join(repoRoot, 'deploy', 'haproxy', 'haproxy.cfg'), 'utf8');
const dir = mkdtempSync(join(tmpdir(), 'sis-lb-'));

/** Removes the configurations written (a test file's `after`). */
export function removeBalancerFiles(): void {
  rmSync(dir, { recursive: true, force: true });
}

/**
 * The repository's balancer configuration, listening on `port` and sending to `servers` instead
 * of the compose names; from the address `source` when given (the balancer's own, which the
 * instances trust, as compose gives it a fixed one).
 */
export function localConfig(port: number, servers: Record<string, string>, source?: string): string {
  let text = BALANCER_CONFIG.replace(/^(\s*bind) :8080$/m, `$1 127.0.0.1:${port}`);
  for (const [name, address] of Object.entries(servers)) {
    const line = `$1 ${address}${source === undefined ? '' : ` source ${source}`}`;
    text = text.replace(new RegExp(`^(\\s*server ${name}) ${name}:8080$`, 'm'), line);
  }
  assert.notEqual(text, BALANCER_CONFIG);
  const file = join(dir, `haproxy-${port}.cfg`);
  writeFileSync(file, text);
  return file;
}

export interface Balancer {
  readonly url: string;
  /** What it logged so far (its configuration logs to stdout), line by line. */
  readonly log: string[];
  close(): void;
}

/** One request over its own connection from the local address `from` (127.0.0.0/8 is all loopback). */
export function requestFrom(
  from: string,
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { localAddress: from, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** The repository's balancer in front of `servers`; resolved once a request reaches one of them. */
export async function startBalancer(servers: Record<string, string>, source?: string): Promise<Balancer> {
  const port = await freePort();
  const haproxy: ChildProcess = spawn(HAPROXY!, ['-db', '-f', localConfig(port, servers, source)], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const log: string[] = [];
  let partial = '';
  haproxy.stdout!.on('data', (chunk: Buffer) => {
    const lines = (partial + chunk.toString('utf8')).split('\n');
    partial = lines.pop()!;
    log.push(...lines);
  });
  const url = `http://127.0.0.1:${port}`;
  try {
    await eventually(
      async () => {
        const res = await fetch(`${url}/PushNotificationMobile.asmx?disco`).catch(() => null);
        await res?.arrayBuffer();
        return res !== null && res.status !== 503 ? true : undefined;
      },
      30_000,
      'an instance in rotation',
    );
  } catch (error) {
    haproxy.kill();
    throw error;
  }
  return { url, log, close: () => haproxy.kill() };
}
