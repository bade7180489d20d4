/**
 * `sis serve`. The settings are read and judged before the service's modules are loaded (the
 * HTTP stack, Kysely, the metrics, the drivers): a bad or unknown setting is reported within a
 * fraction of a second, and a start costs only what it uses.
 */
import cluster from 'node:cluster';
import { describeStartupFailure, reportStartupFailure } from '../app/startup-failure-report.js';
import { ConfigError, loadConfig } from '../config/config.js';
import type { Config } from '../config/config.js';
import { parseWorkers } from '../config/parse-settings.js';
import { SettingReader } from '../config/setting-reader.js';
import { unknownSettingMessage, unknownSettings } from '../config/unknown-settings.js';
import { createLogger, flushLog } from '../logging/logger.js';
import type { Logger } from '../logging/logger.js';
import { redactDatabaseUrl } from '../store/open/database-url.js';
import { optionValue } from './args.js';
import { defineCommand } from './command.js';
import type { Command, Env } from './command.js';

const USAGE = `Usage: sis serve [--workers N|auto]

Runs the Student Information Web Service on HOST:PORT (default 0.0.0.0:8080) with the database
named by SIS_DATABASE_URL (default sqlite:./data/sis.db, created and migrated on start).
Every setting is an environment variable (or a line of the SIS_CONFIG_FILE file):
see docs/operations.md.

Options:
  --workers N   worker processes sharing the port (default SIS_WORKERS, 1); auto = one per core
  -h, --help    show this help

Health: GET /healthz, /readyz; metrics: GET /metrics.
Stops gracefully on SIGTERM or SIGINT: every request received is answered first.
A failure at start is one line on stderr per problem, naming the thing and what to do.
Exit status: 0 stopped cleanly; 1 an unexpected failure (run with LOG_LEVEL=debug for details) or
requests cut at shutdown; 2 usage error; 65 the database is not usable or is newer than this
program; 69 the address cannot be listened on; 77 a permission is missing (a database path,
the PostgreSQL login); 78 invalid configuration (TLS files included) or no such PostgreSQL database.`;

export const serveCommand: Command = defineCommand({
  name: 'serve',
  summary: 'run the web service (the default command)',
  usage: USAGE,
  options: [{ name: 'workers', value: true }],
  async run({ args, env }) {
    const workersFlag = optionValue(args, 'workers');
    const report = (err: unknown, log: Logger | null): number =>
      reportStartupFailure(err, { log, stderr: process.stderr, command: 'sis serve' });
    let config: Config;
    try {
      config = loadConfig(env);
      if (workersFlag !== undefined) {
        const parsed = parseWorkers(workersFlag);
        if ('problem' in parsed) throw new ConfigError([`--workers ${JSON.stringify(workersFlag)}: ${parsed.problem}`]);
        config = { ...config, workers: parsed.value };
      }
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      const fallback = fallbackLogger(env);
      warnUnknownSettings(env, fallback);
      const status = report(err, fallback);
      await flushLog(fallback);
      return status;
    }
    const worker = cluster.isWorker ? { worker: cluster.worker?.id } : {};
    // Workers share the primary's stdout: each of their lines is written whole, unbuffered.
    const multiProcess = cluster.isWorker || config.workers > 1;
    const log = createLogger(config.logLevel, process.stdout, {
      format: config.logFormat,
      base: worker,
      buffered: !multiProcess,
    });
    stopOnUncaught(log);
    warnUnknownSettings(env, log);
    let code: number;
    try {
      code = cluster.isPrimary && config.workers > 1 ? await primary(config, log) : await serve(config, log);
    } catch (err) {
      code = await failedStart(err, log, report);
    }
    await flushLog(log);
    return exitSoon(code);
  },
});

/** A failed start: said once (by the primary for all its workers; a worker keeps the details at debug). */
async function failedStart(err: unknown, log: Logger, report: (err: unknown, log: Logger) => number): Promise<number> {
  if (!cluster.isWorker) return report(err, log);
  log.debug({ err }, 'could not start');
  const failure = describeStartupFailure(err);
  const { relayStartupFailure } = await import('../app/cluster.js');
  await relayStartupFailure(failure);
  return failure.exitStatus;
}

/**
 * An exception nothing caught is a bug: log it, write out the buffered lines, exit 1. Node's own
 * handling would print the stack and exit at once, leaving the log's buffer unwritten.
 */
function stopOnUncaught(log: Logger): void {
  process.once('uncaughtException', (err) => {
    log.fatal({ err }, 'uncaught exception: stopping');
    void flushLog(log).finally(() => process.exit(1));
  });
}

/** The primary of several workers: it forks them and stops them, serving nothing itself. */
async function primary(config: Config, log: Logger): Promise<number> {
  const [{ runPrimary }, { processSignals }] = await Promise.all([
    import('../app/cluster-primary.js'),
    import('../app/signals.js'),
  ]);
  return runPrimary(config, log, config.workers, processSignals);
}

/** One process (alone, or as a cluster worker): listen until a stop signal, then drain. */
async function serve(config: Config, log: Logger): Promise<number> {
  const [{ startApp }, { processSignals }, worker] = await Promise.all([
    import('../app/app.js'),
    import('../app/signals.js'),
    cluster.isWorker ? import('../app/cluster.js') : null,
  ]);
  let fatal: (err: unknown) => void = () => undefined;
  const failed = new Promise<{ readonly err: unknown }>((resolve) => (fatal = (err) => resolve({ err })));
  const app = await startApp(config, log, {
    ...(worker !== null ? { metricsSource: worker.workerMetrics } : {}),
    onFatal: (err) => fatal(err),
  });
  log.info({ url: app.url, database: redactDatabaseUrl(config.databaseUrl), pid: process.pid }, 'listening');
  log.flush(); // the line an operator (or a supervisor) waits for: not held in the buffer
  const signal = await Promise.race([
    failed,
    worker !== null
      ? worker.workerStop(() => app.stopListening())
      : new Promise<string>((resolve) => processSignals.once(resolve)),
  ]);
  if (typeof signal === 'object') {
    // The database was never opened, and retrying cannot help: a start-up failure, reported as one.
    await app.close();
    throw signal.err;
  }
  log.info({ signal, graceMs: config.shutdownGraceMs }, 'shutting down: draining requests');
  const clean = await app.close();
  log.info({ clean }, 'stopped');
  return clean ? 0 : 1;
}

/** SIS_* variables that are no setting (typos), said once: by the primary, as workers share its environment. */
function warnUnknownSettings(env: Env, log: Logger): void {
  if (cluster.isWorker) return;
  for (const u of unknownSettings(env)) log.warn({ setting: u.name, closest: u.closest }, unknownSettingMessage(u));
}

/**
 * A logger for a failure before the configuration is known: LOG_LEVEL and SIS_LOG_FORMAT if they
 * are valid, else their defaults (the configuration's own report names a wrong one).
 */
function fallbackLogger(env: Env): Logger {
  const r = new SettingReader(env);
  return createLogger(r.read('LOG_LEVEL'), process.stdout, { format: r.read('SIS_LOG_FORMAT') });
}

/** The exit code, and an exit a moment later should a forgotten handle keep the process alive. */
function exitSoon(code: number): number {
  setTimeout(() => process.exit(code), 1000).unref();
  return code;
}
