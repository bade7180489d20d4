/**
 * Store settings from the environment, for whoever opens the store (the service, the admin CLI).
 * Every wrong value is named with what is expected, all at once, as the service configuration does.
 */
import type { OpenStoreOptions } from './open-store.js';

export class StoreOptionsError extends Error {
  readonly code = 'ERR_STORE_OPTIONS';
  constructor(readonly problems: readonly string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'StoreOptionsError';
  }
}

/** Limits of each variable: a pool above 1000 or a time-out above a day is a typo, not a choice. */
export const STORE_ENV_LIMITS = {
  SIS_DATABASE_POOL_SIZE: { min: 1, max: 1000 },
  SIS_DATABASE_STATEMENT_TIMEOUT_MS: { min: 0, max: 86_400_000 },
} as const;

/**
 * `SIS_DATABASE_POOL_SIZE` (PostgreSQL connections per process, default 10) and
 * `SIS_DATABASE_STATEMENT_TIMEOUT_MS` (PostgreSQL: longest statement, 0 = no limit; SQLite:
 * longest wait for a lock, default 5000). Unset or empty variables leave the store's defaults.
 */
export function storeOptionsFromEnv(env: Readonly<Record<string, string | undefined>>): OpenStoreOptions {
  const problems: string[] = [];
  const int = (name: keyof typeof STORE_ENV_LIMITS): number | undefined => {
    const raw = env[name];
    if (raw === undefined || raw === '') return undefined;
    const { min, max } = STORE_ENV_LIMITS[name];
    const n = Number(raw.trim());
    if (!/^\d+$/.test(raw.trim()) || !Number.isSafeInteger(n) || n < min || n > max) {
      problems.push(`${name}=${JSON.stringify(raw)}: expected a whole number from ${min} to ${max}`);
      return undefined;
    }
    return n;
  };
  const poolSize = int('SIS_DATABASE_POOL_SIZE');
  const statementTimeoutMs = int('SIS_DATABASE_STATEMENT_TIMEOUT_MS');
  if (problems.length > 0) throw new StoreOptionsError(problems);
  return {
    ...(poolSize === undefined ? {} : { poolSize }),
    ...(statementTimeoutMs === undefined ? {} : { statementTimeoutMs }),
  };
}
