/**
 * A Redis connection for counts taken on a request's way (SMS velocity counters, rate limits): a
 * command waits at most its deadline (SIS_REDIS_TIMEOUT_MS); one that passes it, or a connection
 * that closes, makes Redis lost, and from then on commands fail at once (their callers fall back:
 * the database counts, the rate limit lets requests through) while one probe at a time, on a fresh
 * connection, tries a real round trip (PING within the deadline). The probe that answers becomes
 * the connection. A connection stuck in a partition is dropped, never waited for: after a long
 * partition TCP may not retransmit for minutes, and ioredis's own reconnect and `ready` event never
 * come for a connection that merely stopped answering.
 */
import { Redis } from 'ioredis';

/** How often a lost Redis is tried again (each probe waits at most the deadline). */
const PROBE_EVERY_MS = 1000;

/** What the connection tells its user: each failed call or probe, and each call or probe that worked. */
export interface RedisEvents {
  failed(error: unknown): void;
  /** `startedAt` (ms since the epoch): when the call began (see Dependency.worked). */
  worked(startedAt: number): void;
}

/** Thrown at once while Redis is lost: no connection is tried on a request's way. */
class RedisLost extends Error {
  constructor() {
    super('Redis is unreachable (not tried again until a probe finds it back)');
  }
}

export class FailFastRedis<C extends Redis> {
  #client: C | null = null;
  #probe: C | null = null;
  #timer: NodeJS.Timeout | null = null;
  #closed = false;

  constructor(
    private readonly url: string,
    private readonly timeoutMs: number,
    /** Prepares each fresh connection (defines its scripts). */
    private readonly prepare: (redis: Redis) => C,
    private readonly events: RedisEvents,
  ) {}

  /** The first connection; a Redis that does not answer is reported and probed until it does. */
  start(): Promise<void> {
    return this.#tryAgain();
  }

  /** Runs `command` within the deadline, or fails at once while Redis is lost. */
  async run<T>(command: (redis: C) => Promise<T>): Promise<T> {
    const client = this.#client;
    if (client === null) {
      const lost = new RedisLost();
      this.events.failed(lost);
      throw lost;
    }
    const startedAt = Date.now();
    try {
      const result = await command(client);
      this.events.worked(startedAt);
      return result;
    } catch (error) {
      this.events.failed(error);
      // Redis answered with an error (a script's, out of memory): the connection works.
      if (!(error instanceof Error && error.name === 'ReplyError')) this.#drop(client);
      throw error;
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#client?.disconnect();
    this.#probe?.disconnect();
    this.#client = null;
  }

  /** A fresh connection that ioredis never reconnects or queues for: this class decides. */
  #connection(): C {
    const redis = new Redis(this.url, {
      lazyConnect: true,
      enableOfflineQueue: false,
      enableReadyCheck: false,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
      commandTimeout: this.timeoutMs,
      connectTimeout: this.timeoutMs,
    });
    // Errors reach the commands and the probe; the event would otherwise crash the process.
    redis.on('error', () => undefined);
    return this.prepare(redis);
  }

  /** Stops using `client` (once): Redis is lost until a probe answers. */
  #drop(client: C): void {
    if (this.#client !== client) return;
    this.#client = null;
    client.disconnect();
    this.#schedule(0);
  }

  #schedule(delayMs: number): void {
    if (this.#closed || this.#timer !== null || this.#probe !== null) return;
    this.#timer = setTimeout(() => {
      this.#timer = null;
      void this.#tryAgain();
    }, delayMs);
    this.#timer.unref();
  }

  /** One probe: connect and PING, each within the deadline; the connection is kept if both answer. */
  async #tryAgain(): Promise<void> {
    const fresh = this.#connection();
    this.#probe = fresh;
    const startedAt = Date.now();
    try {
      await fresh.connect();
      await fresh.ping();
    } catch (error) {
      this.#probe = null;
      fresh.disconnect();
      this.events.failed(error);
      this.#schedule(PROBE_EVERY_MS);
      return;
    }
    this.#probe = null;
    if (this.#closed) {
      fresh.disconnect();
      return;
    }
    this.#client = fresh;
    fresh.once('end', () => {
      if (this.#client !== fresh) return;
      this.events.failed(new Error('the connection to Redis closed'));
      this.#drop(fresh);
    });
    this.events.worked(startedAt);
  }
}
