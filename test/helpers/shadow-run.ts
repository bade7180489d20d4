/**
 * Shadow test plumbing: a service of ours beside a legacy service (SIS_SHADOW on), the golden
 * exchanges sent to it as a client would, and the report read back from its database.
 */
import { createShadowCommand } from '../../src/cli/shadow-command.js';
import { buildReport } from '../../src/shadow/report.js';
import type { ShadowReport } from '../../src/shadow/report.js';
import { openStore } from '../../src/store/open/open-store.js';
import type { GoldenCase } from './legacy-replay.js';
import { rawRequest } from './raw-http.js';
import type { RawResponse } from './raw-http.js';
import { goldenDataset, startTestServer } from './test-server.js';
import type { TestServer } from './test-server.js';

export async function startShadowed(
  env: Record<string, string>,
  databaseUrl?: string,
  logDestination?: NodeJS.WritableStream,
): Promise<TestServer> {
  return startTestServer({
    dataset: goldenDataset(),
    ...(logDestination === undefined ? {} : { logDestination }),
    env: {
      SIS_SHADOW_TIMEOUT_MS: '2000',
      ...(databaseUrl === undefined ? {} : { SIS_DATABASE_URL: databaseUrl }),
      ...env,
    },
  });
}

/** One golden request, as the golden test sends it. */
export function sendCase(url: string, c: GoldenCase): Promise<RawResponse> {
  return rawRequest(url, { method: c.method, path: c.path, headers: c.headers, ...(c.body ? { body: c.body } : {}) });
}

/** The report of a database, read as `sis shadow report --json` reads it. */
export async function reportOf(databaseUrl: string): Promise<ShadowReport> {
  const store = await openStore(databaseUrl, { poolSize: 2 });
  try {
    return await buildReport(store.shadow, new Date(0));
  } finally {
    await store.close();
  }
}

/** The service's SQLite file as a URL (its own store), or the URL it was given. */
export function databaseUrlOf(server: TestServer, given?: string): string {
  return given ?? `sqlite:${server.databaseFile}`;
}

/** Stops the service (its comparisons end and its counts are stored), reads the report, removes its files. */
export async function finish(server: TestServer, databaseUrl?: string): Promise<ShadowReport> {
  await server.app.close();
  const report = await reportOf(databaseUrlOf(server, databaseUrl));
  await server.close();
  return report;
}

/** `sis shadow ARGS` run in process with `env`, its output caught. */
export async function shadowCli(
  args: readonly string[],
  env: Record<string, string>,
): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const command = createShadowCommand({
    stdout: { write: (t: string) => (out += t) },
    stderr: { write: (t: string) => (err += t) },
  });
  const code = await command.run([...args], env);
  return { code, out, err };
}
