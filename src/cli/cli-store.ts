/**
 * The database a command works on: the URL and store settings from the environment (as the
 * service reads them), opened for the command's needs, closed afterwards, failures reported.
 */
import { ConfigError, loadConfig } from '../config/config.js';
import { DatabaseUrlError, redactDatabaseUrl } from '../store/open/database-url.js';
import { dialectFor } from '../store/open/open-store.js';
import { openStore } from '../store/open/open-store.js';
import type { OpenStoreOptions } from '../store/open/open-store.js';
import type { SqlStore } from '../store/sql/sql-store.js';
import type { CommandOutput } from './output.js';
import { CommandError, errorMessage } from './output.js';

export type CommandEnv = Readonly<Record<string, string | undefined>>;

export interface CommandStoreOptions {
  /** "apply" for commands that write (they create and migrate, as the service does); "require" for those that only read. */
  readonly migrations: 'apply' | 'require';
  /**
   * Statements that legitimately run long (an import's merge, an export): no statement time-out
   * where it bounds run time, and no query deadline (PostgreSQL).
   */
  readonly bulk?: boolean;
  /** Appended to a failure's message ("; nothing was imported"). */
  readonly failureNote?: string;
}

export interface CommandDatabase {
  readonly url: string;
  /** The URL without its password, for messages. */
  readonly shownUrl: string;
  readonly options: OpenStoreOptions;
}

/** Throws ConfigError (with every wrong variable) or DatabaseUrlError. */
export function commandDatabase(env: CommandEnv, options: CommandStoreOptions): CommandDatabase {
  const config = loadConfig(env);
  const url = config.databaseUrl;
  const unbounded = options.bulk === true && dialectFor(url).statementTimeoutLimitsRuns;
  const statementTimeoutMs = unbounded ? 0 : config.databaseStatementTimeoutMs;
  return {
    url,
    shownUrl: redactDatabaseUrl(url),
    options: {
      // A command uses one connection at a time; the pool's default is for the service.
      poolSize: Math.min(config.databasePoolSize, 2),
      ...(statementTimeoutMs === null ? {} : { statementTimeoutMs }),
      applicationName: 'sis-cli',
      // A command that is not bulk ends with its line within a deadline of its own, as a request
      // does (docs/operations.md, A partition of the database), instead of waiting out a partition.
      ...(options.bulk === true
        ? {}
        : { queryTimeoutMs: config.commandQueryTimeoutMs, queryTimeoutSetting: 'SIS_COMMAND_QUERY_TIMEOUT_MS' }),
      migrations: options.migrations,
    },
  };
}

/** Opens the store, runs `work`, closes it; returns `work`'s exit status, or 1 with a message. */
export async function withCommandStore(
  name: string,
  output: CommandOutput,
  env: CommandEnv,
  options: CommandStoreOptions,
  work: (store: SqlStore, database: CommandDatabase) => Promise<number>,
): Promise<number> {
  const err = (line: string): unknown => output.stderr.write(`sis ${name}: ${line}${options.failureNote ?? ''}\n`);
  let database: CommandDatabase;
  try {
    database = commandDatabase(env, options);
  } catch (error) {
    if (error instanceof ConfigError || error instanceof DatabaseUrlError) {
      output.stderr.write(`sis ${name}: ${error.message}\n`);
      return 1;
    }
    throw error;
  }
  let store: SqlStore;
  try {
    store = await openStore(database.url, database.options);
  } catch (error) {
    err(error instanceof DatabaseUrlError ? error.message : `${database.shownUrl}: ${errorMessage(error)}`);
    return 1;
  }
  try {
    return await work(store, database);
  } catch (error) {
    err(error instanceof CommandError ? error.message : `${database.shownUrl}: ${errorMessage(error)}`);
    return 1;
  } finally {
    await store.close();
  }
}
