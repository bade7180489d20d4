import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startApp } from '../../src/app/app.js';
import type { App, AppOptions } from '../../src/app/app.js';
import { loadConfig } from '../../src/config/config.js';
import { parseDataset } from '../../src/dataset/parse-dataset.js';
import { createLogger } from '../../src/logging/logger.js';
import type { Operation } from '../../src/operations/index.js';
import type { Dataset, ServiceStore } from '../../src/store/store.js';
import { SMS_PROTECTION_OFF } from './sms-protection.js';

/** The repository root, from dist/test/helpers or test/helpers alike. */
export const repoRoot = fileURLToPath(
  new URL(import.meta.url.includes('/dist/') ? '../../../' : '../../', import.meta.url),
);

export function fixture(...parts: string[]): string {
  return join(repoRoot, 'test', ...parts);
}

/** The dataset the golden captures need: the reference data plus the oracle's echo probes as rows. */
export function goldenDataset(): Dataset {
  return parseDataset(readFileSync(fixture('fixtures', 'golden-dataset.json'), 'utf8'));
}

export interface TestServer {
  readonly app: App;
  readonly url: string;
  /** The SQLite file behind the server (when it opened its own store). */
  readonly databaseFile: string;
  close(): Promise<void>;
}

export interface TestServerOptions {
  readonly env?: Record<string, string>;
  readonly dataset?: Dataset;
  readonly store?: ServiceStore;
  readonly logDestination?: NodeJS.WritableStream;
  /** The operations to serve instead of the contract's (a test-only operation added to them). */
  readonly operations?: readonly Operation[];
  /** The clock operations read (AppOptions.now). */
  readonly now?: () => Date;
}

/**
 * A real service on a free port with a real SQLite file in a fresh temporary folder.
 * `env` overrides configuration; `dataset` is imported before the first request.
 */
export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const dir = mkdtempSync(join(tmpdir(), 'sis-test-'));
  const databaseFile = join(dir, 'sis.db');
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    SIS_DATABASE_URL: `sqlite:${databaseFile}`,
    SIS_DEMO_DATA: 'false',
    LOG_LEVEL: 'silent',
    // Tests close servers whose clients keep idle connections: no need to wait for them.
    SIS_SHUTDOWN_GRACE_MS: '0',
    ...SMS_PROTECTION_OFF,
    ...options.env,
  });
  const appOptions: AppOptions = { store: options.store, operations: options.operations, now: options.now };
  const app = await startApp(config, createLogger(config.logLevel, options.logDestination), appOptions);
  if (options.dataset !== undefined) await app.store.importDataset(options.dataset, { replace: true });
  return {
    app,
    url: app.url,
    databaseFile,
    async close() {
      await app.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
