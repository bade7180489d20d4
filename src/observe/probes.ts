/**
 * Does it answer? Redis and the SMS gateway, asked once without side effects, for `sis check`.
 * Each resolves with a short description of the answer or rejects with why there was none;
 * neither ever shows a password or the webhook's secret.
 */

/** `redis://host:port/db` without user or password. */
export function shownRedisUrl(url: string): string {
  return url.replace(/\/\/[^@/]*@/, '//');
}

/** PING, on a connection of its own that neither queues nor retries. */
export async function probeRedis(url: string, timeoutMs: number): Promise<string> {
  const { Redis } = await import('ioredis');
  const redis = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: timeoutMs,
    commandTimeout: timeoutMs,
    retryStrategy: () => null,
  });
  // The socket's error (ECONNREFUSED) comes as an event; connect() only says "Connection is closed".
  let socketError: unknown = null;
  redis.on('error', (error: unknown) => (socketError ??= error));
  const started = Date.now();
  try {
    await redis.connect();
    const answer = await redis.ping();
    return `${shownRedisUrl(url)} answered ${answer} in ${Date.now() - started} ms`;
  } catch (error) {
    const why = reason(socketError ?? error);
    throw new Error(
      `${shownRedisUrl(url)} does not answer (${why}): rate limits would not be enforced; check SIS_REDIS_URL and the server`,
    );
  } finally {
    redis.disconnect();
  }
}

/**
 * A HEAD request to the webhook: never a message. Any answer below 500 (a 405 for HEAD is usual)
 * shows the gateway is there; a 5xx, a refused connection or a time-out does not.
 */
export async function probeWebhook(url: string, timeoutMs: number): Promise<string> {
  const origin = new URL(url).origin; // the path or query may carry a token
  const started = Date.now();
  let status: number;
  try {
    const res = await fetch(url, { method: 'HEAD', signal: AbortSignal.timeout(timeoutMs), redirect: 'manual' });
    await res.arrayBuffer().catch(() => undefined);
    status = res.status;
  } catch (error) {
    const why =
      error instanceof Error && error.name === 'TimeoutError' ? `no answer within ${timeoutMs} ms` : reason(error);
    throw new Error(
      `${origin} does not answer (${why}): codes would wait in the outbox; check SIS_SMS_WEBHOOK_URL and the gateway`,
    );
  }
  if (status >= 500)
    throw new Error(
      `${origin} answered ${status} to a HEAD request: the gateway is in trouble; codes would wait in the outbox`,
    );
  return `${origin} answered ${status} to a HEAD request in ${Date.now() - started} ms`;
}

function reason(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  // fetch hides the socket's error in its cause: "fetch failed" alone says nothing.
  const cause = error.cause instanceof Error ? error.cause : null;
  const inner = cause !== null ? ((cause as NodeJS.ErrnoException).code ?? cause.message) : null;
  return inner ?? error.message;
}
