/**
 * Deadlines on the service's PostgreSQL calls, measured here (a partitioned server never receives
 * its own statement_timeout), and the circuit breaker that keeps calls off the pool while the
 * database is known not to answer (issue 40). One place, between the pg pool and everything that
 * uses it (Kysely, the data version): no call site has a deadline of its own.
 *
 * - Waiting for a connection (a new one, or a free one of a full pool) is pg-pool's
 *   connectionTimeoutMillis; the calls waiting at once are bounded (`maxWaiting`), more fail at once.
 * - A query not answered within `queryTimeoutMs` fails, and its connection is destroyed (as pg-pool
 *   destroys one that does not connect in time), so the pool is whole again when the network is.
 * - A transaction (Kysely's plain `begin`) must end within `queryTimeoutMs` of its begin, and tells
 *   the server so: `sis.commit_within` (ms from the transaction's start, by the server's own clock:
 *   no difference between the hosts' clocks refuses a write), which migration 13's deferred trigger
 *   checks at COMMIT on auth_codes. A COMMIT that reaches the server after we gave up (sent into
 *   a partition, delivered when it ends) rolls back instead of storing a code nobody was told of;
 *   and idle_in_transaction_session_timeout, so the server ends a transaction we abandoned.
 * - A deadline passed or a connection refused opens the breaker: every call fails at once
 *   (ERR_DB_UNAVAILABLE, the database unavailable: reads answer their stale answers) without
 *   touching the pool, while one probe at a time (`select 1` on a pooled connection, under the
 *   same deadlines) finds out when it is back. Any answer closes it.
 * - A server found read-only (a standby where the primary was: a switchover, postgres-hosts.ts)
 *   opens it too, each call failing at once with 25006 naming that server, until the probe gets a
 *   connection to a writable one: only the probe closes it then.
 */
import type { PostgresCursor, PostgresPool, PostgresPoolClient, PostgresQueryResult } from 'kysely';
import type { PoolClient, QueryArrayConfig, QueryArrayResult } from 'pg';
import { databaseCondition, errorCode } from '../db-errors.js';
import type { ConnectionSource } from './postgres-hosts.js';
import { ServerSessionError } from './postgres-hosts.js';

export interface DeadlineOptions {
  /** The longest a query, and a transaction from begin to commit, waits for its answer (ms). */
  readonly queryTimeoutMs: number;
  /** The most calls waiting for a connection at once; more fail at once (ERR_DB_BUSY). */
  readonly maxWaiting: number;
  /** The setting that chose queryTimeoutMs, named in the error (default SIS_DATABASE_QUERY_TIMEOUT_MS). */
  readonly setting?: string;
  /** The pause between probes while the database is unavailable (default 500 ms). */
  readonly probeIntervalMs?: number;
  /** The probe got a writable connection after the server was found read-only. */
  readonly onWritableAgain?: () => void;
}

/** A query the database did not answer within its deadline: its connection was destroyed. */
export class DatabaseTimeoutError extends Error {
  readonly code = 'ERR_DB_TIMEOUT';
}

/** The breaker is open: the database did not answer lately, and a probe is finding out when it does. */
export class DatabaseUnavailableError extends Error {
  readonly code = 'ERR_DB_UNAVAILABLE';
}

/** Too many calls already wait for a connection: this one is not queued. */
export class DatabaseBusyError extends Error {
  readonly code = 'ERR_DB_BUSY';
}

/** The share of the deadline a COMMIT must reach the server before: its answer's way back. */
const COMMIT_MARGIN = 4;

/** The pg pool behind its deadlines and breaker, shaped as Kysely's PostgresDialect takes a pool. */
export class DeadlinePool implements PostgresPool {
  #waiting = 0;
  /** Since when the breaker is open (ms since the epoch), null while closed. */
  #downSince: number | null = null;
  /** Why it is open: the server found read-only (only a probe's connection closes it then), or null: not answering. */
  #readOnly: ServerSessionError | null = null;
  #probing = false;
  #probeTimer: NodeJS.Timeout | undefined;
  #ended = false;

  constructor(
    readonly pool: ConnectionSource,
    readonly options: DeadlineOptions,
  ) {}

  connect(): Promise<PostgresPoolClient> {
    return this.#connect().then((client) => new DeadlineClient(client, this));
  }

  /** One query (the data version's named statement) on a pooled connection, under the deadlines. */
  async queryArray<R extends unknown[]>(config: QueryArrayConfig): Promise<QueryArrayResult<R>> {
    const client = new DeadlineClient(await this.#connect(), this);
    try {
      return await client.timed(() => client.client.query<R>(config));
    } finally {
      client.release();
    }
  }

  end(): Promise<void> {
    this.#ended = true;
    clearTimeout(this.#probeTimer);
    return this.pool.end();
  }

  #connect(): Promise<PoolClient> {
    if (this.#downSince !== null && this.#readOnly !== null)
      return Promise.reject(
        new ServerSessionError(
          `${this.#readOnly.message} (since ${new Date(this.#downSince).toISOString()}; not asked again until a probe finds a writable server)`,
          '25006',
          this.#readOnly.where,
          { cause: this.#readOnly },
        ),
      );
    if (this.#downSince !== null)
      return Promise.reject(
        new DatabaseUnavailableError(
          `the database has not answered since ${new Date(this.#downSince).toISOString()}: not asked again until a probe finds it back`,
        ),
      );
    if (this.#waiting >= this.options.maxWaiting)
      return Promise.reject(
        new DatabaseBusyError(
          `${this.#waiting} calls already wait for a database connection (SIS_DATABASE_MAX_WAITING): raise SIS_DATABASE_POOL_SIZE or the database's capacity`,
        ),
      );
    this.#waiting++;
    return this.pool.connect().then(
      (client) => {
        this.#waiting--;
        return client;
      },
      (error: unknown) => {
        this.#waiting--;
        const condition = databaseCondition(error);
        if (condition === 'unavailable') this.tripped();
        else if (condition === 'read-only' && error instanceof ServerSessionError) this.tripped(error);
        throw error;
      },
    );
  }

  /**
   * A deadline passed or a connection was refused (or, with `readOnly`, a new connection found its
   * server read-only): calls fail at once until a probe gets an answer (a writable connection).
   */
  tripped(readOnly: ServerSessionError | null = null): void {
    if (this.#ended) return;
    if (this.#downSince !== null) {
      // Still out, for the latest reason (a stopped primary back as a standby).
      this.#readOnly = readOnly;
      return;
    }
    this.#downSince = Date.now();
    this.#readOnly = readOnly;
    this.#probe();
  }

  /** An answer came: the database answers (a server found read-only waits for the probe). */
  answered(): void {
    if (this.#downSince === null || this.#readOnly !== null) return;
    this.#close();
  }

  #close(): void {
    this.#downSince = null;
    this.#readOnly = null;
    clearTimeout(this.#probeTimer);
  }

  #probe(): void {
    if (this.#probing || this.#downSince === null || this.#ended) return;
    this.#probing = true;
    this.pool
      .connect()
      .then(async (pooled) => {
        const client = new DeadlineClient(pooled, this);
        try {
          await client.timed(() => pooled.query('select 1'));
          // Every new connection is judged writable (postgres-hosts.ts): writes work again, even
          // on an instance no write reaches soon.
          const wasReadOnly = this.#readOnly !== null;
          this.#close();
          if (wasReadOnly) this.options.onWritableAgain?.();
        } finally {
          client.release();
        }
      })
      .catch((error: unknown) => {
        // The server answered, but is not the primary (yet): calls say so meanwhile.
        if (error instanceof ServerSessionError && error.code === '25006') this.#readOnly = error;
        else if (databaseCondition(error) === 'unavailable') this.#readOnly = null;
      })
      .finally(() => {
        this.#probing = false;
        if (this.#downSince === null || this.#ended) return;
        this.#probeTimer = setTimeout(() => this.#probe(), this.options.probeIntervalMs ?? 500);
        this.#probeTimer.unref();
      });
  }
}

/** A pooled connection whose queries have deadlines; destroyed on release once one passed. */
class DeadlineClient implements PostgresPoolClient {
  /** The deadline that passed on this connection: every later query fails with it at once. */
  #expired: DatabaseTimeoutError | null = null;
  /** When the transaction begun on this connection must have ended (ms since the epoch), 0 outside one. */
  #transactionEnds = 0;

  constructor(
    readonly client: PoolClient,
    private readonly guard: DeadlinePool,
  ) {}

  query<R>(sql: string, parameters: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>>;
  query<R>(cursor: PostgresCursor<R>): PostgresCursor<R>;
  query<R>(
    sql: string | PostgresCursor<R>,
    parameters?: ReadonlyArray<unknown>,
  ): Promise<PostgresQueryResult<R>> | PostgresCursor<R> {
    if (typeof sql !== 'string') throw new TypeError('cursors are not used by the store');
    const { client } = this;
    if (sql === 'begin') {
      // The server is told the deadline with the begin (one round trip): see migration 12.
      const { queryTimeoutMs } = this.guard.options;
      this.#transactionEnds = Date.now() + queryTimeoutMs;
      // A duration from the transaction's start, which the server measures on its own clock
      // (migration 13): an instant of ours would be read against a clock that may differ.
      const commitWithin = queryTimeoutMs - Math.floor(queryTimeoutMs / COMMIT_MARGIN);
      // Transaction-local (PgBouncer's transaction pooling keeps it); the server also ends the
      // transaction if we leave it idle past the deadline, so its locks do not hold other instances.
      const local = `select set_config('sis.commit_within', '${commitWithin}', true), set_config('idle_in_transaction_session_timeout', '${queryTimeoutMs}', true)`;
      return this.timed(() => client.query(`begin; ${local}`)).then((result) => first<R>(result));
    }
    const ends = sql === 'commit' || sql === 'rollback';
    const result = this.timed(() => client.query(sql, [...(parameters ?? [])]));
    if (ends) {
      const done = (): void => {
        this.#transactionEnds = 0;
      };
      result.then(done, done);
    }
    return result as unknown as Promise<PostgresQueryResult<R>>;
  }

  /** `run` on this connection, failed (and the connection destroyed) past its deadline. */
  timed<T>(run: () => Promise<T>): Promise<T> {
    if (this.#expired !== null) return Promise.reject(this.#expired);
    const { queryTimeoutMs, setting = 'SIS_DATABASE_QUERY_TIMEOUT_MS' } = this.guard.options;
    const ms = this.#transactionEnds === 0 ? queryTimeoutMs : Math.max(1, this.#transactionEnds - Date.now());
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        const error = new DatabaseTimeoutError(
          `the database did not answer within ${ms} ms (${setting}): the connection is dropped; check the database server and the network`,
        );
        this.#expired = error;
        // As pg-pool does with a connection that does not connect in time: its query then ends too.
        (this.client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
        this.guard.tripped();
        reject(error);
      }, ms);
      run().then(
        (value) => {
          clearTimeout(timer);
          this.guard.answered();
          resolve(value);
        },
        (error: unknown) => {
          clearTimeout(timer);
          reject(
            errorCode(error) === '25006' && !(error instanceof ServerSessionError)
              ? readOnlyAnswer(this.client, error)
              : (error as Error),
          );
        },
      );
    });
  }

  release(): void {
    // With an error, pg-pool removes the connection instead of handing it out again.
    this.client.release(this.#expired ?? undefined);
  }
}

/** A 25006 answer, saying which server gave it (postgres-hosts.ts has retired its connections). */
function readOnlyAnswer(client: PoolClient, error: unknown): ServerSessionError {
  const { host, port } = client as unknown as { host?: string; port?: number };
  const where = `${host ?? 'localhost'}:${port ?? 5432}`;
  return new ServerSessionError(
    `the database server at ${where} refused a write as read-only (${(error as Error).message}): it is no longer the primary; every connection to it is closed, new ones go to a writable server`,
    '25006',
    where,
    { cause: error },
  );
}

/** A multi-statement query's first result (the begin's), as Kysely expects one. */
function first<R>(result: unknown): PostgresQueryResult<R> {
  return (Array.isArray(result) ? result[0] : result) as PostgresQueryResult<R>;
}
