/**
 * Configuration from the environment, validated once at start. Every wrong value is reported with
 * its name and what is expected, all at once, so an operator fixes them in one go.
 */

export interface Config {
  readonly port: number;
  readonly host: string;
  /** The service namespace: element namespaces and SOAPAction values everywhere. */
  readonly namespace: string;
  readonly databaseUrl: string;
  /** Where the service is mounted, with leading and trailing slash ("/" or "/School/"). */
  readonly basePath: string;
  /** A public base URL that overrides the Host header in WSDL and disco addresses. */
  readonly publicUrl: string | null;
  /** Client addresses whose X-Forwarded-Proto/Host headers are believed. */
  readonly trustedProxies: readonly string[];
  readonly maxBodyBytes: number;
  readonly maxXmlDepth: number;
  readonly maxFormFields: number;
  /** Whole-request time-out (slow clients), in milliseconds. */
  readonly requestTimeoutMs: number;
  readonly headersTimeoutMs: number;
  readonly keepAliveTimeoutMs: number;
  /** Load demo data on the first start of an empty database. */
  readonly demoData: boolean;
  /** Who sees the help page test form: local callers only (as .NET), everyone, or no one. */
  readonly helpTestForm: 'local' | 'all' | 'off';
  readonly logLevel: string;
}

export const DEFAULT_DATABASE_URL = 'sqlite:./data/sis.db';

export class ConfigError extends Error {
  readonly code = 'ERR_CONFIG';
  constructor(readonly problems: readonly string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

type Env = Readonly<Record<string, string | undefined>>;

export function loadConfig(env: Env = process.env): Config {
  const problems: string[] = [];
  const str = (name: string, fallback: string): string => {
    const v = env[name];
    return v === undefined || v === '' ? fallback : v;
  };
  const int = (name: string, fallback: number, min: number, max: number): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const n = Number(raw);
    if (!/^\d+$/.test(raw.trim()) || !Number.isSafeInteger(n) || n < min || n > max) {
      problems.push(`${name}=${JSON.stringify(raw)}: expected a whole number from ${min} to ${max}`);
      return fallback;
    }
    return n;
  };
  const bool = (name: string, fallback: boolean): boolean => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    if (/^(1|true|yes|on)$/i.test(raw)) return true;
    if (/^(0|false|no|off)$/i.test(raw)) return false;
    problems.push(`${name}=${JSON.stringify(raw)}: expected true or false`);
    return fallback;
  };
  const oneOf = <T extends string>(name: string, fallback: T, allowed: readonly T[]): T => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const found = allowed.find((a) => a === raw.toLowerCase());
    if (found === undefined) problems.push(`${name}=${JSON.stringify(raw)}: expected one of ${allowed.join(', ')}`);
    return found ?? fallback;
  };
  const url = (name: string, raw: string | undefined): string | null => {
    if (raw === undefined || raw === '') return null;
    try {
      const u = new URL(raw);
      if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('scheme');
      return raw;
    } catch {
      problems.push(`${name}=${JSON.stringify(raw)}: expected an absolute http:// or https:// URL`);
      return null;
    }
  };

  const namespace = str('SIS_NAMESPACE', 'http://tempuri.org/');
  if (/[\s"'<>&]/.test(namespace)) {
    problems.push(`SIS_NAMESPACE=${JSON.stringify(namespace)}: expected a URI without spaces, quotes, <, > or &`);
  }
  let basePath = str('SIS_BASE_PATH', '/');
  if (!/^\/([A-Za-z0-9._~-]+\/)*$/.test(basePath.endsWith('/') ? basePath : `${basePath}/`)) {
    problems.push(`SIS_BASE_PATH=${JSON.stringify(basePath)}: expected a path such as / or /School/`);
    basePath = '/';
  } else if (!basePath.endsWith('/')) {
    basePath = `${basePath}/`;
  }
  const publicUrl = url('SIS_PUBLIC_URL', env['SIS_PUBLIC_URL']);
  const trustedProxies = str('SIS_TRUSTED_PROXIES', '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');

  const config: Config = {
    port: int('PORT', 8080, 0, 65535),
    host: str('HOST', '0.0.0.0'),
    namespace,
    databaseUrl: str('SIS_DATABASE_URL', DEFAULT_DATABASE_URL),
    basePath,
    publicUrl: publicUrl === null ? null : publicUrl.replace(/\/+$/, ''),
    trustedProxies,
    maxBodyBytes: int('SIS_MAX_BODY_BYTES', 4 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
    maxXmlDepth: int('SIS_MAX_XML_DEPTH', 64, 4, 10_000),
    maxFormFields: int('SIS_MAX_FORM_FIELDS', 1000, 1, 1_000_000),
    requestTimeoutMs: int('SIS_REQUEST_TIMEOUT_MS', 30_000, 100, 3_600_000),
    headersTimeoutMs: int('SIS_HEADERS_TIMEOUT_MS', 10_000, 100, 3_600_000),
    keepAliveTimeoutMs: int('SIS_KEEP_ALIVE_TIMEOUT_MS', 5_000, 0, 3_600_000),
    demoData: bool('SIS_DEMO_DATA', true),
    helpTestForm: oneOf('SIS_HELP_TEST_FORM', 'local', ['local', 'all', 'off'] as const),
    logLevel: oneOf('LOG_LEVEL', 'info', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const),
  };
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}
