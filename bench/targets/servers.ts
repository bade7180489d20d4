import { closeSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  BENCH_DIST,
  CLI,
  REPO_ROOT,
  freePort,
  nodeCommand,
  runChild,
  startChild,
  waitUntilUp,
} from '../load/processes.js';
import type { Child } from '../load/processes.js';
import { pathFor } from '../scenarios/scenario.js';
import type { Scenario, TargetName } from '../scenarios/scenario.js';
import type { FixedAnswer } from './ceiling-server.js';
import type { NecessaryRoute } from './necessary-server.js';

/** The .asmx files whose WSDL node-soap serves. */
export const SERVICES = ['PushNotificationMobile', 'NotificationNotes', 'AuthCodeSending'] as const;

export interface Server {
  readonly target: TargetName;
  readonly child: Child;
  /** `http://127.0.0.1:PORT` */
  readonly base: string;
}

/** How a server's node is started: flags (a profiler), a command in front (valgrind), a longer wait. */
export interface Launch {
  readonly nodeFlags?: readonly string[];
  readonly wrapper?: readonly string[];
  /** How long to wait for its first answer (default 15 s; valgrind needs far longer). */
  readonly upTimeoutMs?: number;
  /** Another node binary than the one running the bench (bench/memory.ts: Node 22, 24, 26). */
  readonly node?: string;
  /** More settings for the service (compare mode). */
  readonly env?: Readonly<Record<string, string>>;
}

const launchCommand = (
  core: string | null,
  launch: Launch,
  args: readonly string[],
): { file: string; args: string[] } =>
  nodeCommand(core, [...(launch.nodeFlags ?? []), ...args], launch.wrapper, launch.node);

/**
 * The node flags `npm start` gives the runtime (NODE_FLAGS in scripts/start.js, read from there so
 * there is one list): ours runs with them unless a launch names its own (`nodeFlags: []` for the
 * runtime's own defaults).
 */
export function shippedNodeFlags(): string[] {
  const text = readFileSync(join(REPO_ROOT, 'scripts', 'start.js'), 'utf8');
  const list = /^const NODE_FLAGS = \[(.*)\];$/m.exec(text)?.[1];
  if (list === undefined) throw new Error('scripts/start.js has no `const NODE_FLAGS = [...];` line');
  return [...list.matchAll(/'([^']*)'/g)].map((m) => m[1]!);
}

/** A SQLite file of the run's, or the database named by BENCH_DATABASE_URL (PostgreSQL) for every server. */
const dbUrl = (file: string): string => process.env['BENCH_DATABASE_URL'] ?? `sqlite:${file}`;

/** Loads a dataset into a fresh SQLite file with our own import command. */
export async function importDataset(datasetFile: string, dbFile: string): Promise<void> {
  await runChild(nodeCommand(null, [CLI, 'import', datasetFile, '--replace']), {
    ...process.env,
    SIS_DATABASE_URL: dbUrl(dbFile),
    LOG_LEVEL: 'silent',
  });
}

/**
 * The benchmarks' AuthCode requests send made-up phones (+1 555…) thousands of times from one
 * address: they measure the durable write, so the per-phone limit and the SMS-pumping rules
 * (docs/sms.md), which would refuse them at once, are off; so is the repeat rule, which would
 * answer their one code to one phone without writing it.
 */
export const AUTH_CODE_LIMITS_OFF: Readonly<Record<string, string>> = {
  SIS_AUTH_CODES_PER_HOUR: '0',
  SIS_SMS_REFUSE_TYPES: 'none',
  SIS_AUTH_CODE_BACKOFF: 'off',
  SIS_AUTH_CODES_PER_ADDRESS_HOUR: '0',
  SIS_AUTH_CODES_PER_RANGE_HOUR: '0',
  SIS_SMS_COUNTRY_DAILY_LIMITS: 'none',
  SIS_AUTH_CODE_REPEAT_MS: '0',
};

/**
 * Our service, started as `npm start` starts it: `sis serve` with its defaults and node's flags of
 * scripts/start.js (shippedNodeFlags), logging at info,
 * one JSON line per request to stdout, which is a file here (`logFile`, as a supervisor gives
 * it); only what a benchmark must set is set (port, database, no demo data, no hourly limit).
 * `silent` adds LOG_LEVEL=silent, for what the access log costs.
 */
export async function startOurs(
  core: string | null,
  dbFile: string,
  logFile: string,
  options: Launch & { silent?: boolean } = {},
): Promise<Server> {
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    SIS_DATABASE_URL: dbUrl(dbFile),
    PORT: String(port),
    HOST: '127.0.0.1',
    SIS_DEMO_DATA: 'false',
    SIS_WORKERS: '1',
    // Stopping between runs need not wait for idle keep-alive connections.
    SIS_SHUTDOWN_GRACE_MS: '0',
    ...AUTH_CODE_LIMITS_OFF,
    ...options.env,
  };
  if (options.silent === true) env['LOG_LEVEL'] = 'silent';
  const fd = openSync(logFile, 'a');
  const target = options.silent === true ? 'ours-silent' : 'ours';
  const launch = { ...options, nodeFlags: options.nodeFlags ?? shippedNodeFlags() };
  const child = startChild(target, launchCommand(core, launch, [CLI, 'serve']), env, fd);
  closeSync(fd);
  const base = `http://127.0.0.1:${port}`;
  await waitUntilUp(child, `${base}/PushNotificationMobile.asmx?WSDL`, options.upTimeoutMs);
  return { target, child, base };
}

/** Fetches our WSDL documents, which node-soap then serves. */
export async function fetchWsdl(ours: Server, dir: string): Promise<void> {
  mkdirSync(dir, { recursive: true });
  for (const name of SERVICES) {
    const res = await fetch(`${ours.base}/${name}.asmx?WSDL`);
    if (!res.ok) throw new Error(`WSDL of ${name}: HTTP ${res.status}`);
    writeFileSync(join(dir, `${name}.wsdl`), await res.text());
  }
}

export async function startPeer(
  core: string | null,
  dbFile: string,
  wsdlDir: string,
  launch: Launch = {},
): Promise<Server> {
  const port = await freePort();
  const child = startChild(
    'node-soap',
    launchCommand(core, launch, [join(BENCH_DIST, 'targets/peer-server.js'), wsdlDir, ...SERVICES]),
    {
      ...process.env,
      SIS_DATABASE_URL: dbUrl(dbFile),
      PORT: String(port),
    },
  );
  const base = `http://127.0.0.1:${port}`;
  await waitUntilUp(child, `${base}/PushNotificationMobile.asmx?wsdl`, launch.upTimeoutMs);
  return { target: 'node-soap', child, base };
}

export async function startCeiling(
  core: string | null,
  scenarios: readonly Scenario[],
  work: string,
  launch: Launch = {},
): Promise<Server> {
  const table: Record<string, FixedAnswer> = {};
  for (const s of scenarios) table[pathFor(s, 'ceiling')] = s.expected;
  const file = join(work, 'ceiling-answers.json');
  writeFileSync(file, JSON.stringify(table));
  const port = await freePort();
  const child = startChild(
    'ceiling',
    launchCommand(core, launch, [join(BENCH_DIST, 'targets/ceiling-server.js'), file]),
    {
      ...process.env,
      PORT: String(port),
    },
  );
  const base = `http://127.0.0.1:${port}`;
  await waitUntilUp(child, `${base}/`, launch.upTimeoutMs);
  return { target: 'ceiling', child, base };
}

/**
 * The necessary-work server on the run's SQLite file (it has no PostgreSQL counterpart: with
 * BENCH_DATABASE_URL it is not run).
 */
export async function startNecessary(
  core: string | null,
  scenarios: readonly Scenario[],
  dbFile: string,
  work: string,
  launch: Launch = {},
): Promise<Server> {
  const table: Record<string, NecessaryRoute> = {};
  for (const s of scenarios) {
    if (s.necessary === undefined) continue;
    const path = pathFor(s, 'necessary');
    const q = path.indexOf('?');
    table[q < 0 ? path : path.slice(0, q)] = { work: s.necessary, contentType: s.expected.contentType };
  }
  const file = join(work, 'necessary-routes.json');
  writeFileSync(file, JSON.stringify(table));
  const port = await freePort();
  const script = join(BENCH_DIST, 'targets/necessary-server.js');
  const child = startChild('necessary', launchCommand(core, launch, [script, dbFile, file]), {
    ...process.env,
    PORT: String(port),
  });
  const base = `http://127.0.0.1:${port}`;
  await waitUntilUp(child, `${base}/`, launch.upTimeoutMs);
  return { target: 'necessary', child, base };
}
