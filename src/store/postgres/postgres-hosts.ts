/**
 * The connections of a PostgreSQL store: one pg pool per host of the URL's list (libpq's
 * `a:5432,b:5432`, which node-postgres does not parse; docs/decisions.md says why a pool per host),
 * each new connection checked against `target_session_attrs` before anything uses it, and no
 * connection kept once its server turned out to be the wrong one (issue 44: a switchover).
 *
 * - A new connection's server is judged by what it reports at start-up (PostgreSQL 14 and later
 *   report `in_hot_standby` and `default_transaction_read_only`, as libpq reads them), else by one
 *   query; a pooled connection is never checked again: nothing is paid per request.
 * - One that does not fit (a standby reached through an address that has not moved yet) is closed
 *   and the next host is tried, in the list's order (the host that worked last first, unless
 *   `load_balance_hosts=random`), all within the connect deadline.
 * - A connection that answers SQLSTATE 25006 (read-only transaction), or whose server reports it
 *   became a standby or read-only, retires every connection to that host: idle ones are closed at
 *   once, busy ones when released; new ones are checked again.
 */
import type pg from 'pg';
import type { Pool, PoolClient, QueryArrayConfig, QueryArrayResult } from 'pg';

/** One host of a PostgreSQL URL's list (open/database-url.ts): `host:port` for messages, and the URL naming it alone. */
export interface PostgresHost {
  readonly where: string;
  readonly connectionString: string;
}

/** What a connection's server must be, as libpq's `target_session_attrs` says (libpq 16). */
export type SessionAttrs = 'any' | 'read-write' | 'read-only' | 'primary' | 'standby' | 'prefer-standby';
export const SESSION_ATTRS: readonly SessionAttrs[] = [
  'any',
  'read-write',
  'read-only',
  'primary',
  'standby',
  'prefer-standby',
];

/** A server that does not fit `target_session_attrs`; 25006 (read-only) when a writable one was asked for. */
export class ServerSessionError extends Error {
  constructor(
    message: string,
    readonly code: string,
    readonly where: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'ServerSessionError';
  }
}

/** The connections' settings that are not the host's (pg.Pool's options). */
export type HostPoolOptions = Omit<pg.PoolConfig, 'connectionString' | 'Client'> & {
  readonly connectionTimeoutMillis: number;
};

/** What the servers must be, how the hosts are tried, and where errors of idle connections go. */
export interface SessionOptions {
  readonly sessionAttrs: SessionAttrs;
  readonly loadBalance: boolean;
  readonly onBackgroundError: (error: Error) => void;
}

/** What the store's connections are taken from: the shape of pg.Pool the store uses. */
export interface ConnectionSource {
  connect(): Promise<PoolClient>;
  query<R extends unknown[]>(config: QueryArrayConfig): Promise<QueryArrayResult<R>>;
  end(): Promise<void>;
}

interface ServerState {
  readonly standby: boolean;
  readonly readOnly: boolean;
}

/** What the client learnt of its server at start-up, and the retirement it may call for later. */
interface Watched {
  reported: Map<string, string>;
  /**
   * Set once the connection is handed out (null: new, not checked yet): its host's connections are
   * retired when it answers 25006 (`answered`), or its server reports it became read-only.
   */
  onReadOnly: ((how: 'answered' | 'reported') => void) | null;
}

const WATCHED = Symbol('sis.watched');
type WatchedClient = PoolClient & { [WATCHED]: Watched };

/** pg's Client, remembering the ParameterStatus messages and watching for 25006 answers. */
function watchingClient(driver: typeof pg): typeof pg.Client {
  return class WatchingClient extends driver.Client {
    readonly [WATCHED]: Watched = { reported: new Map(), onReadOnly: null };
    constructor(config?: pg.ClientConfig) {
      super(config);
      const watched = this[WATCHED];
      this.connection.on('parameterStatus', (m: { parameterName: string; parameterValue: string }) => {
        watched.reported.set(m.parameterName, m.parameterValue);
        // A promoted server says in_hot_standby=off; a demoted one ends its connections (it restarts).
        if (
          (m.parameterName === 'in_hot_standby' || m.parameterName === 'default_transaction_read_only') &&
          m.parameterValue === 'on'
        )
          watched.onReadOnly?.('reported');
      });
      this.connection.on('errorMessage', (m: { code?: string }) => {
        if (m.code === '25006') watched.onReadOnly?.('answered');
      });
    }
  };
}

class Host {
  readonly pool: Pool;
  /** Every connection of this host's pool, and those handed out now. */
  readonly #all = new Set<PoolClient>();
  readonly #busy = new Set<PoolClient>();
  /** Connections not to be handed out again: closed when idle, or on release. */
  readonly retired = new WeakSet<PoolClient>();

  constructor(
    readonly where: string,
    driver: typeof pg,
    connectionString: string,
    options: HostPoolOptions,
    onBackgroundError: (error: Error) => void,
  ) {
    this.pool = new driver.Pool({ ...options, connectionString, Client: watchingClient(driver) });
    // A connection that dies emits 'error' on its client, idle or checked out. A checked-out client
    // has no pool listener, so without this one the error would be unhandled and end the process.
    // (The failed query itself rejects as usual; the pool drops the client when it is released.)
    // One closed here because it was retired is no news.
    this.pool.on('connect', (client) => {
      this.#all.add(client);
      client.on('error', (error) => {
        if (!this.retired.has(client)) onBackgroundError(error);
      });
    });
    this.pool.on('remove', (client) => {
      this.#all.delete(client);
      this.#busy.delete(client);
    });
    // The pool re-emits idle clients' errors, which the listener above has already reported.
    this.pool.on('error', () => undefined);
  }

  /** Hands out `client`: its release closes it once retired. */
  lend(client: PoolClient, writable: boolean): PoolClient {
    this.#busy.add(client);
    // pg-pool's release is a closure of its own (no `this`), made anew at each checkout.
    const release = client.release;
    client.release = (error?: Error | boolean) => {
      this.#busy.delete(client);
      release(error ?? (this.retired.has(client) ? true : undefined));
    };
    // A connection that answered 25006 is never reused, whatever was asked; one whose server says
    // it became read-only, when a writable one was.
    (client as WatchedClient)[WATCHED].onReadOnly ??= (how) => {
      if (how === 'answered' || writable) this.retire();
    };
    return client;
  }

  /** Every connection to this host: the idle ones closed now, the busy ones on release. */
  retire(): void {
    for (const client of this.#all) {
      if (this.retired.has(client)) continue;
      this.retired.add(client);
      // The pool drops an idle client whose connection ends (its error listener), as when the server closes it.
      if (!this.#busy.has(client)) (client as unknown as pg.Client).connection.stream.destroy();
    }
  }
}

export class HostPool implements ConnectionSource {
  readonly #hosts: Host[];
  /** The host that gave a fitting connection last: tried first (unless load balancing). */
  #last = 0;

  constructor(
    driver: typeof pg,
    hosts: readonly PostgresHost[],
    private readonly session: SessionOptions,
    private readonly options: HostPoolOptions,
  ) {
    this.#hosts = hosts.map((h) => new Host(h.where, driver, h.connectionString, options, session.onBackgroundError));
  }

  /** `host:port` of each host, for messages. */
  get where(): string {
    return this.#hosts.map((h) => h.where).join(',');
  }

  connect(): Promise<PoolClient> {
    // One host (the usual URL): its pool's own time-out bounds the wait; no timer, no list per call.
    if (this.#hosts.length === 1 && this.session.sessionAttrs !== 'prefer-standby') {
      const host = this.#hosts[0]!;
      const want = this.session.sessionAttrs;
      // A pooled connection already judged and not retired (nearly every call) goes out as it is.
      return host.pool
        .connect()
        .then((client) =>
          (client as WatchedClient)[WATCHED].onReadOnly !== null && !host.retired.has(client)
            ? host.lend(client, want === 'read-write' || want === 'primary')
            : this.#judge(host, want, 0, client),
        );
    }
    return this.#connectToList();
  }

  async #connectToList(): Promise<PoolClient> {
    const deadline = Date.now() + this.options.connectionTimeoutMillis;
    const wanted = this.session.sessionAttrs;
    const failures: unknown[] = [];
    for (const want of wanted === 'prefer-standby' ? (['standby', 'any'] as const) : [wanted])
      for (const i of this.#order()) {
        const host = this.#hosts[i]!;
        const left = deadline - Date.now();
        if (left <= 0) break;
        try {
          const client = await this.#take(host, want, left);
          this.#last = i;
          return client;
        } catch (error) {
          failures.push(error);
        }
      }
    if (failures.length === 1) throw failures[0];
    const session = failures.find((f): f is ServerSessionError => f instanceof ServerSessionError);
    const reasons = failures.map((f) => (f instanceof ServerSessionError ? f.message : `${messageOf(f)}`)).join('; ');
    if (session !== undefined)
      throw new ServerSessionError(
        `no host of ${this.where} is a server that fits target_session_attrs=${wanted}: ${reasons}`,
        session.code,
        session.where,
        { cause: new AggregateError(failures) },
      );
    if (failures.length === 0)
      throw Object.assign(new Error(`no connection to ${this.where} within the connect deadline`), {
        code: 'ETIMEDOUT',
      });
    throw new AggregateError(failures, `no host of ${this.where} answered: ${reasons}`);
  }

  async query<R extends unknown[]>(config: QueryArrayConfig): Promise<QueryArrayResult<R>> {
    const client = await this.connect();
    let failure: Error | undefined;
    try {
      return await client.query<R>(config);
    } catch (error) {
      // A connection that failed mid-query is not handed out again (as pg.Pool's own query does).
      failure = error as Error;
      throw error;
    } finally {
      client.release(failure !== undefined && isConnectionError(failure) ? failure : undefined);
    }
  }

  async end(): Promise<void> {
    await Promise.all(this.#hosts.map((h) => h.pool.end()));
  }

  /** The hosts' indexes in the order to try them. */
  #order(): number[] {
    const all = this.#hosts.map((_, i) => i);
    if (this.session.loadBalance) {
      for (let i = all.length - 1; i > 0; i--) {
        const j = Math.floor(Math.random() * (i + 1));
        [all[i], all[j]] = [all[j]!, all[i]!];
      }
      return all;
    }
    return [this.#last, ...all.filter((i) => i !== this.#last)];
  }

  /** A connection to `host` that fits `want`, within `ms` (0: the pool's own time-out); a new one checked first. */
  async #take(host: Host, want: Exclude<SessionAttrs, 'prefer-standby'>, ms: number): Promise<PoolClient> {
    return this.#judge(
      host,
      want,
      ms,
      await (ms === 0 ? host.pool.connect() : within(host.pool.connect(), ms, host.where)),
    );
  }

  /** `client` of `host`'s pool lent if it fits `want` (a new one judged first), else closed and another taken. */
  async #judge(
    host: Host,
    want: Exclude<SessionAttrs, 'prefer-standby'>,
    ms: number,
    first: PoolClient,
  ): Promise<PoolClient> {
    for (
      let client = first;
      ;
      client = await (ms === 0 ? host.pool.connect() : within(host.pool.connect(), ms, host.where))
    ) {
      const watched = (client as WatchedClient)[WATCHED];
      if (host.retired.has(client)) {
        // Handed out from the idle list before its close was seen: close it, take another.
        client.release(true);
        continue;
      }
      if (watched.onReadOnly === null) {
        // New: its server is judged once, before anything uses it.
        let state: ServerState;
        try {
          state = await serverState(client);
        } catch (error) {
          client.release(true);
          throw error;
        }
        const misfit = misfitOf(want, state, host.where);
        if (misfit !== null) {
          client.release(true);
          // A writable server asked for and a read-only one found: its other connections may be
          // the same (a proxy or PgBouncer in front of a demoted primary): they go too.
          if (misfit.code === '25006') host.retire();
          throw misfit;
        }
      }
      return host.lend(client, want === 'read-write' || want === 'primary');
    }
  }
}

/** `promise` (a pool's connect) within `ms`; one that comes later is released unused. */
function within(promise: Promise<PoolClient>, ms: number, where: string): Promise<PoolClient> {
  return new Promise((resolve, reject) => {
    let late = false;
    const timer = setTimeout(() => {
      late = true;
      reject(Object.assign(new Error(`${where}: no connection within the connect deadline`), { code: 'ETIMEDOUT' }));
    }, ms);
    promise.then(
      (client) => {
        clearTimeout(timer);
        if (late) client.release(true);
        else resolve(client);
      },
      (error: unknown) => {
        clearTimeout(timer);
        if (!late) reject(error as Error);
      },
    );
  });
}

/** The server's state from what it reported at start-up (PostgreSQL 14+), else asked once. */
async function serverState(client: PoolClient): Promise<ServerState> {
  const { reported } = (client as WatchedClient)[WATCHED];
  const hotStandby = reported.get('in_hot_standby');
  const readOnly = reported.get('default_transaction_read_only');
  if (hotStandby !== undefined && readOnly !== undefined)
    return { standby: hotStandby === 'on', readOnly: hotStandby === 'on' || readOnly === 'on' };
  const { rows } = await client.query<{ standby: boolean; read_only: string }>(
    "select pg_is_in_recovery() as standby, current_setting('transaction_read_only') as read_only",
  );
  return { standby: rows[0]!.standby, readOnly: rows[0]!.read_only === 'on' };
}

/** Why a server does not fit `want`, or null. */
function misfitOf(
  want: Exclude<SessionAttrs, 'prefer-standby'>,
  state: ServerState,
  where: string,
): ServerSessionError | null {
  const is = state.standby
    ? 'a standby (in recovery)'
    : state.readOnly
      ? 'read-only (default_transaction_read_only)'
      : 'a writable primary';
  const fits =
    want === 'any' ||
    (want === 'read-write' && !state.readOnly) ||
    (want === 'primary' && !state.standby) ||
    (want === 'read-only' && state.readOnly) ||
    (want === 'standby' && state.standby);
  if (fits) return null;
  const writable = want === 'read-write' || want === 'primary';
  return new ServerSessionError(
    writable
      ? `the database server at ${where} is ${is}, not the primary: its connection is closed; writes fail until the address points at the primary (a switchover) or SIS_DATABASE_URL names it`
      : `the database server at ${where} is ${is}, not what target_session_attrs=${want} asks for`,
    writable ? '25006' : 'ERR_DB_SESSION',
    where,
  );
}

/** A failure that leaves the connection unusable (its socket gone or the protocol out of step). */
function isConnectionError(error: Error): boolean {
  const code = (error as { code?: unknown }).code;
  return typeof code !== 'string' || !/^[0-9A-Z]{5}$/.test(code);
}

function messageOf(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  const message = error instanceof Error ? error.message : String(error);
  return typeof code === 'string' && code !== '' && !message.includes(code) ? `${message} (${code})` : message;
}
