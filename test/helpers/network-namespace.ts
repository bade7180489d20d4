/**
 * A service and its clients in a network namespace of their own (iproute2's `ip netns`, as root),
 * so that connections really come from the addresses a test names (6to4, NAT64, Teredo, any
 * IPv6 /64) without touching the machine's own network: the addresses are put on the
 * namespace's loopback, the service listens on `::` (an IPv4 client then shows as
 * `::ffff:a.b.c.d`), and each request is sent from its address. Outside, inNamespace runs
 * requestsFrom inside and hands back what it saw.
 */
import { execFile, spawnSync } from 'node:child_process';
import { request } from 'node:http';
import { isIPv4 } from 'node:net';
import { promisify } from 'node:util';
import type { Dataset } from '../../src/store/store.js';
import { logCollector } from './log-collector.js';
import { midHour } from './sms-calls.js';
import { repoRoot, startTestServer } from './test-server.js';

const run = promisify(execFile);

/** Why namespaces cannot be made here (not root, no iproute2, no namespaces), or false. */
export const NAMESPACE_SKIP: string | false = namespaceSkip();

function namespaceSkip(): string | false {
  if (process.getuid?.() !== 0)
    return 'not root: the tests that need sockets from chosen addresses (ip netns) are skipped';
  const probe = `sis-probe-${process.pid}`;
  const added = spawnSync('ip', ['netns', 'add', probe], { encoding: 'utf8' });
  if (added.error !== undefined)
    return 'iproute2 (ip) is not installed: apt-get install -y iproute2 to run these tests';
  if (added.status !== 0)
    return `ip netns add failed (${added.stderr.trim()}): network namespaces are not available here`;
  spawnSync('ip', ['netns', 'delete', probe]);
  return false;
}

/** What the service inside is started with, and the requests made to it. */
export interface NamespacePlan {
  readonly env: Record<string, string>;
  readonly dataset?: Dataset;
  /** Each request's source address (also the address it is sent to) and path. */
  readonly requests: readonly { readonly from: string; readonly path: string }[];
}

/** Each request's status, and the `client` of each access log line, in order. */
export interface NamespaceSeen {
  readonly statuses: number[];
  readonly clients: unknown[];
}

let made = 0;

/**
 * Makes a namespace with `addresses` on its loopback, runs requestsFrom(plan) in a Node process
 * inside it, and deletes the namespace whatever happened.
 */
export async function inNamespace(addresses: readonly string[], plan: NamespacePlan): Promise<NamespaceSeen> {
  const name = `sis-test-${process.pid}-${made++}`;
  await run('ip', ['netns', 'add', name]);
  try {
    const ip = (...args: string[]): Promise<unknown> => run('ip', ['netns', 'exec', name, 'ip', ...args]);
    await ip('link', 'set', 'lo', 'up');
    for (const address of addresses)
      if (isIPv4(address)) await ip('addr', 'add', `${address}/32`, 'dev', 'lo');
      else await ip('-6', 'addr', 'add', `${address}/128`, 'dev', 'lo', 'nodad');
    const script = `
      const { requestsFrom } = await import(${JSON.stringify(`${repoRoot}dist/test/helpers/network-namespace.js`)});
      console.log(JSON.stringify(await requestsFrom(JSON.parse(process.argv[1]))));`;
    const { stdout } = await run(
      'ip',
      ['netns', 'exec', name, process.execPath, '--input-type=module', '-e', script, JSON.stringify(plan)],
      { timeout: 60_000 },
    );
    return JSON.parse(stdout) as NamespaceSeen;
  } finally {
    await run('ip', ['netns', 'delete', name]);
  }
}

/** Inside the namespace: a service on `::` (clock in the middle of the hour), each request from its own address. */
export async function requestsFrom(plan: NamespacePlan): Promise<NamespaceSeen> {
  const log = logCollector();
  const server = await startTestServer({
    env: { ...plan.env, HOST: '::', LOG_LEVEL: 'info' },
    ...(plan.dataset === undefined ? {} : { dataset: plan.dataset }),
    logDestination: log.stream,
    now: midHour(),
  });
  const statuses: number[] = [];
  try {
    const port = Number(new URL(server.url).port);
    for (const { from, path } of plan.requests) statuses.push(await statusFrom(from, port, path));
  } finally {
    await server.close();
  }
  return { statuses, clients: log.lines.filter((l) => l['msg'] === 'request').map((l) => l['client']) };
}

function statusFrom(address: string, port: number, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: address, port, path, localAddress: address, agent: false, timeout: 10_000 }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('timeout', () => req.destroy(new Error(`no answer to ${address} within 10 s`)));
    req.on('error', reject);
    req.end();
  });
}
