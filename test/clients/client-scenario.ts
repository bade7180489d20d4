/**
 * Running the one scenario every WSDL-generated client runs (its table, operation by operation,
 * is in scenarios.ts) and checking what the client reports back.
 *
 * External clients (zeep, suds, gSOAP, JAX-WS) print one JSON object, `{ "<port>": PortReport }`,
 * and the TS test compares it here, so every client is held to the same values with the same
 * failure messages.
 */
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { after, before } from 'node:test';
import { operations, operationsFor, services } from '../../src/operations/index.js';
import { sqliteRows } from '../helpers/sqlite-file.js';
import { fixture, startTestServer } from '../helpers/test-server.js';
import type { TestServer } from '../helpers/test-server.js';
import { callsExpected, callsSeen, failedExchanges, startRecordingProxy } from './recording-proxy.js';
import type { RecordingProxy } from './recording-proxy.js';
import {
  dataset,
  expectedExtendedPort,
  expectedPort,
  extendedDataset,
  PHONE,
  scenarioProblems,
  STORED_PHONE,
} from './scenarios.js';

/** Checks a client's report port by port; `voidPorts` lists the ports that also called the void operations. */
export function assertReport(report: unknown, ports: readonly string[], voidPorts: readonly string[]): void {
  assert.ok(typeof report === 'object' && report !== null, 'the client printed a JSON object');
  assert.deepEqual(Object.keys(report).sort(), [...ports].sort(), 'the client reported every port');
  for (const port of ports) {
    assert.deepEqual(
      (report as Record<string, unknown>)[port],
      expectedPort(voidPorts.includes(port)),
      `values seen over port ${port}`,
    );
  }
}

/** Checks that each port's AuthCode call reached the store with its arguments intact. */
export function assertAuthCodes(server: TestServer, client: string, ports: readonly string[]): void {
  const codes = [...ports].sort().map((port) => `${client}-${port}`);
  const rows = sqliteRows(
    server.databaseFile,
    `SELECT code, phone FROM auth_codes WHERE code IN (${codes.map(() => '?').join(', ')}) ORDER BY code`,
    ...codes,
  );
  assert.deepEqual(
    rows,
    codes.map((code) => ({ code, phone: STORED_PHONE })),
    'AuthCode recorded one row per SOAP port, code intact, phone in its normal form',
  );
}

/**
 * Checks an extended-mode report, port by port. `emptyIsMissing`: the client reads an empty
 * element (`<Note />`, an empty string) as None, as it reads a field left out (zeep does).
 */
export function assertExtendedReport(
  report: unknown,
  ports: readonly string[],
  options: { readonly emptyIsMissing?: boolean } = {},
): void {
  assert.ok(typeof report === 'object' && report !== null, 'the client printed a JSON object');
  assert.deepEqual(Object.keys(report).sort(), [...ports].sort(), 'the client reported every port');
  // Lists of records (the marks) lose their empty fields when the client reads them as missing.
  const seen = (value: unknown): unknown =>
    options.emptyIsMissing === true && Array.isArray(value)
      ? value.map((m: Readonly<Record<string, unknown>>) =>
          Object.fromEntries(Object.entries(m).filter(([, v]) => v !== '')),
        )
      : value;
  const expected = Object.fromEntries(Object.entries(expectedExtendedPort()).map(([key, value]) => [key, seen(value)]));
  for (const port of ports)
    assert.deepEqual((report as Record<string, unknown>)[port], expected, `extended values over port ${port}`);
}

export interface ScenarioServer {
  readonly server: TestServer;
  readonly proxy: RecordingProxy;
  /** Where clients go: the proxy, so every call is recorded. */
  readonly url: string;
}

/**
 * Registers hooks that start a server with the scenario's dataset (behind a recording proxy) for
 * the current suite; first, that the scenario table covers the contract, so an operation without a
 * client scenario fails every client test.
 */
export function useScenarioServer(options: { readonly extended?: boolean } = {}): ScenarioServer {
  let server: TestServer | undefined;
  let proxy: RecordingProxy | undefined;
  before(async () => {
    assert.deepEqual(
      scenarioProblems(operations, operationsFor('extended')),
      [],
      'every operation of the contract has its client scenario',
    );
    server =
      options.extended === true
        ? await startTestServer({ dataset: extendedDataset, env: { SIS_RESULTS: 'extended' } })
        : await startTestServer({ dataset });
    proxy = await startRecordingProxy(server.url);
  });
  after(async () => {
    await proxy?.close();
    await server?.close();
  });
  return {
    get server() {
      assert.ok(server, 'the scenario server is started');
      return server;
    },
    get proxy() {
      assert.ok(proxy, 'the scenario proxy is started');
      return proxy;
    },
    get url() {
      assert.ok(proxy, 'the scenario proxy is started');
      return proxy.url;
    },
  };
}

/** Checks that the client made exactly the expected (binding, operation) calls, and that all of them succeeded. */
export function assertCalls(proxy: RecordingProxy, calls: Readonly<Record<string, readonly string[]>>): void {
  assert.equal(failedExchanges(proxy.exchanges), '', 'every exchange answered 200');
  assert.deepEqual(
    callsSeen(proxy.exchanges),
    callsExpected(calls),
    'the bindings and operations the client really used',
  );
}

/** The absolute path of an executable found on PATH (or given absolutely), or null. */
export function findExecutable(name: string): string | null {
  const candidates = name.includes('/')
    ? [name]
    : (process.env['PATH'] ?? '').split(delimiter).map((d) => join(d, name));
  for (const file of candidates) {
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      // not here: try the next folder
    }
  }
  return null;
}

export interface RunResult {
  readonly stdout: string;
  readonly stderr: string;
  readonly ms: number;
}

/**
 * Runs a tool without blocking: the server under test lives in this process, so a synchronous
 * spawn would leave every request the tool makes unanswered.
 */
export function run(
  file: string,
  args: readonly string[],
  options: { cwd?: string; timeoutMs?: number; env?: Record<string, string> } = {},
): Promise<RunResult> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    execFile(
      file,
      args,
      {
        cwd: options.cwd,
        timeout: options.timeoutMs ?? 120_000,
        maxBuffer: 32 * 1024 * 1024,
        encoding: 'utf8',
        // A UTF-8 locale whatever the machine's: Java decodes argv (the phone has an é) by it.
        env: { ...process.env, LC_ALL: 'C.UTF-8', ...options.env },
      },
      (error, stdout, stderr) => {
        const ms = Date.now() - started;
        if (error) {
          const tail = (s: string): string => (s.length > 6000 ? `...${s.slice(-6000)}` : s);
          reject(
            new Error(
              `${file} ${args.join(' ')} failed (${error.message.split('\n')[0]})\n--- stdout\n${tail(stdout)}\n--- stderr\n${tail(stderr)}`,
            ),
          );
        } else resolve({ stdout, stderr, ms });
      },
    );
  });
}

/** The JSON report a client printed as its last line of output. */
export function parseReport(stdout: string): unknown {
  const last = stdout.trimEnd().split('\n').pop() ?? '';
  try {
    return JSON.parse(last);
  } catch {
    assert.fail(`the client did not end with a JSON report; its output was:\n${stdout}`);
  }
}

/** A source file of an external client, read from the repository (tsc copies none of them). */
export function clientSource(tool: string, ...parts: string[]): string {
  return fixture('clients', tool, ...parts);
}

/** A fresh folder for generated code, outside the repository; the caller removes it. */
export function buildFolder(tool: string): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), `sis-${tool}-`));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

/** The service files, from the contract, in name order. */
export const SERVICE_FILES: readonly string[] = services.map((s) => s.name).sort();

/** Debian's Python, whose packages hold the clients (python3-zeep, python3-suds). */
const PYTHON = '/usr/bin/python3';

/** Why a Python client cannot run here (its module does not import), or null when it can. */
export function missingPythonModule(module: string, debianPackage: string): string | null {
  const probe = spawnSync(PYTHON, ['-c', `import ${module}`], { encoding: 'utf8' });
  if (probe.error !== undefined || probe.status !== 0)
    return `${module} not found for ${PYTHON}: install ${debianPackage}`;
  return null;
}

/** Runs `test/clients/<tool>/client.py` against the scenario server; `extra` selects a variant. */
export function runPythonClient(tool: string, url: string, ...extra: string[]): Promise<RunResult> {
  return run(PYTHON, [clientSource(tool, 'client.py'), url, tool, PHONE, ...extra], {
    env: { PYTHONIOENCODING: 'utf-8' },
  });
}
