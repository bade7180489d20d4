/**
 * A Redis client for counts taken on a request's way (SMS velocity counters, rate limits): it fails
 * at once while Redis is away instead of queueing commands, so a request never waits for Redis to
 * come back; its callers fall back (the database counts) or let the request through.
 */
import { Redis } from 'ioredis';

export function failFastRedis(url: string): Redis {
  return new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: 500,
    connectTimeout: 2000,
  });
}
