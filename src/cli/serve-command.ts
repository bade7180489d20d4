import cluster from 'node:cluster';
import { startApp } from '../app/app.js';
import { ConfigError, loadConfig } from '../config/config.js';
import type { Config } from '../config/config.js';
import { createLogger, flushLog } from '../logging/logger.js';
import type { Logger } from '../logging/logger.js';
import { processSignals, runPrimary, workerMetrics, workerStop } from '../app/cluster.js';
import { parseWorkers } from '../config/parse-settings.js';
import { redactDatabaseUrl } from '../store/database-url.js';
import type { Command } from './command.js';

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
Exit status: 0 stopped cleanly, 1 failed to start or requests cut at shutdown, 2 usage error.`;

export const serveCommand: Command = {
  name: 'serve',
  summary: 'run the web service (the default command)',
  usage: USAGE,
  async run(args, env) {
    let workersFlag: string | undefined;
    for (let i = 0; i < args.length; i++) {
      const arg = args[i]!;
      if (arg === '--workers' && i + 1 < args.length) workersFlag = args[++i];
      else if (arg.startsWith('--workers=')) workersFlag = arg.slice('--workers='.length);
      else {
        process.stderr.write(`sis serve: unknown argument ${arg}\n\n${USAGE}\n`);
        return 2;
      }
    }
    let config: Config;
    try {
      config = loadConfig(env);
      if (workersFlag !== undefined) {
        const parsed = parseWorkers(workersFlag);
        if ('problem' in parsed) throw new ConfigError([`--workers ${JSON.stringify(workersFlag)}: ${parsed.problem}`]);
        config = { ...config, workers: parsed.value };
      }
    } catch (err) {
      if (err instanceof ConfigError) {
        process.stderr.write(`${err.message}\n`);
        return 1;
      }
      throw err;
    }
    const worker = cluster.isWorker ? { worker: cluster.worker?.id } : {};
    // Workers share the primary's stdout: each of their lines is written whole, unbuffered.
    const multiProcess = cluster.isWorker || config.workers > 1;
    const log = createLogger(config.logLevel, process.stdout, { format: config.logFormat, base: worker, buffered: !multiProcess });
    stopOnUncaught(log);
    let code: number;
    try {
      code = cluster.isPrimary && config.workers > 1 ? await runPrimary(config, log, config.workers, processSignals) : await serve(config, log);
    } catch (err) {
      log.fatal({ err }, 'could not start');
      code = 1;
    }
    await flushLog(log);
    return exitSoon(code);
  },
};

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

/** One process (alone, or as a cluster worker): listen until a stop signal, then drain. */
async function serve(config: Config, log: Logger): Promise<number> {
  let fatal: (reason: string) => void = () => undefined;
  const failed = new Promise<string>((resolve) => (fatal = resolve));
  const app = await startApp(config, log, {
    ...(cluster.isWorker ? { metricsSource: workerMetrics } : {}),
    onFatal: () => fatal('database'),
  });
  log.info({ url: app.url, database: redactDatabaseUrl(config.databaseUrl), pid: process.pid }, 'listening');
  log.flush(); // the line an operator (or a supervisor) waits for: not held in the buffer
  const signal = await Promise.race([
    failed,
    cluster.isWorker ? workerStop(() => app.stopListening()) : new Promise<string>((resolve) => processSignals.once(resolve)),
  ]);
  if (signal === 'database') {
    await app.close();
    return 1;
  }
  log.info({ signal, graceMs: config.shutdownGraceMs }, 'shutting down: draining requests');
  const clean = await app.close();
  log.info({ clean }, 'stopped');
  return clean ? 0 : 1;
}

/** The exit code, and an exit a moment later should a forgotten handle keep the process alive. */
function exitSoon(code: number): number {
  setTimeout(() => process.exit(code), 1000).unref();
  return code;
}
