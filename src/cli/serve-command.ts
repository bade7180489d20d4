import { startApp } from '../app/app.js';
import { ConfigError, loadConfig } from '../config/config.js';
import { createLogger } from '../http/logger.js';
import type { Command } from './command.js';

export const serveCommand: Command = {
  name: 'serve',
  summary: 'run the web service (the default command)',
  usage: `Usage: sis serve

Runs the Student Information Web Service on HOST:PORT (default 0.0.0.0:8080) with the database
named by SIS_DATABASE_URL (default sqlite:./data/sis.db, created and migrated on start).
Every setting is an environment variable: see the README's configuration table.
Stops gracefully on SIGTERM or SIGINT.`,
  async run(_args, env) {
    let config;
    try {
      config = loadConfig(env);
    } catch (err) {
      if (err instanceof ConfigError) {
        process.stderr.write(`${err.message}\n`);
        return 1;
      }
      throw err;
    }
    const log = createLogger(config.logLevel);
    const app = await startApp(config, log);
    log.info({ url: app.url, database: config.databaseUrl.replace(/\/\/[^@/]*@/, '//***@') }, 'listening');
    await new Promise<void>((resolve) => {
      const stop = (signal: string): void => {
        log.info({ signal }, 'shutting down');
        void app.close().then(resolve);
      };
      process.once('SIGTERM', stop);
      process.once('SIGINT', stop);
    });
    log.info('stopped');
    return 0;
  },
};
