/**
 * The database a command works on: the URL and store settings from the environment (as the
 * service reads them), opened for the command's needs, closed afterwards, failures reported. A
 * command whose work may run again whole is run again, on a store opened anew (new connections),
 * while the database refuses writes or does not answer, for up to SIS_COMMAND_RETRY_MS.
 */
import { ConfigError, loadConfig } from '../config/config.js';
import { StartupError } from '../errors/startup-errors.js';
import { DatabaseUrlError, redactDatabaseUrl } from '../store/open/database-url.js';
import { dialectFor } from '../store/open/open-store.js';
import { openStore } from '../store/open/open-store.js';
import type { OpenStoreOptions } from '../store/open/open-store.js';
import type { SqlStore } from '../store/sql/sql-store.js';
import { isUnwritable } from '../store/write-retry.js';
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
  /**
   * The work may run again whole: each of its writes is one transaction that a failure rolls back,
   * or finds itself done when run again, and it writes its output only once the writes are done.
   * Opening and work are then tried again while the database is read-only or unavailable (a
   * switchover), for up to SIS_COMMAND_RETRY_MS.
   */
  readonly rerun?: boolean;
}

export interface CommandDatabase {
  readonly url: string;
  /** The URL without its password, for messages. */
  readonly shownUrl: string;
  readonly options: OpenStoreOptions;
  /** SIS_COMMAND_RETRY_MS. */
  readonly retryMs: number;
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
    retryMs: config.commandRetryMs,
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
  const again = rerunner(name, output, database, options.rerun === true);
  for (;;) {
    let store: SqlStore;
    try {
      store = await openStore(database.url, database.options);
    } catch (error) {
      if (await again(error)) continue;
      err(error instanceof DatabaseUrlError ? error.message : `${database.shownUrl}: ${errorMessage(error)}`);
      return 1;
    }
    let failure: unknown;
    try {
      return await work(store, database);
    } catch (error) {
      failure = error;
    } finally {
      await store.close();
    }
    if (await again(failure)) continue;
    err(failure instanceof CommandError ? failure.message : `${database.shownUrl}: ${errorMessage(failure)}`);
    return 1;
  }
}

/**
 * Whether to run again after `error`: only a command that may, only while the database is
 * read-only or unavailable, and only until SIS_COMMAND_RETRY_MS after the first such failure; says
 * so on standard error, then waits (250 ms, doubling up to 2 s).
 */
function rerunner(
  name: string,
  output: CommandOutput,
  database: CommandDatabase,
  rerun: boolean,
): (error: unknown) => Promise<boolean> {
  let deadline: number | null = null;
  let attempt = 0;
  return async (error) => {
    // A start-up error names something to fix (a login, a file's rights): waiting does not cure it.
    if (!rerun || error instanceof StartupError || !isUnwritable(error)) return false;
    deadline ??= Date.now() + database.retryMs;
    const left = deadline - Date.now();
    if (left <= 0) return false;
    const delayMs = Math.min(left, 250 * 2 ** Math.min(attempt++, 3));
    output.stderr.write(
      `sis ${name}: ${database.shownUrl}: ${errorMessage(error)}; the database refuses writes or does not answer: trying again on new connections in ${delayMs} ms (for up to ${Math.ceil(left / 1000)} s more, SIS_COMMAND_RETRY_MS)\n`,
    );
    await new Promise((resolve) => setTimeout(resolve, delayMs));
    return true;
  };
}
