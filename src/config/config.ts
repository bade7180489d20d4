/**
 * Configuration from the environment (and SIS_CONFIG_FILE under it), validated once at start.
 * Every wrong value is reported with its name and what is expected, all at once, so an operator
 * fixes them in one go. docs/operations.md lists every setting (src/ops/settings.ts).
 */
import { isIP } from 'node:net';
import { services } from '../operations/index.js';
import type { ResultsMode } from '../operations/index.js';
import { DatabaseUrlError, parseDatabaseUrl } from '../store/database-url.js';
import { mergeConfigFile } from '../ops/config-file.js';
import { loadTls } from './tls-files.js';
import { parseApiKeys, parseCidrList, parseRateLimit, parseServiceList, parseWorkers } from '../ops/parse-settings.js';
import type { Parsed, RateLimit } from '../ops/parse-settings.js';

export type { RateLimit, ResultsMode };

/** The SMS gateway AuthCode's messages are posted to. */
export interface SmsWebhook {
  readonly url: string;
  /** Keys the HMAC-SHA256 signature of each body. */
  readonly secret: string;
  readonly timeoutMs: number;
}

/** How the outbox worker delivers: see src/outbox/outbox-worker.ts. */
export interface OutboxSettings {
  readonly pollMs: number;
  readonly maxAttempts: number;
  /** Delay before the second attempt; it doubles with each attempt, up to 5 minutes (or this, when longer). */
  readonly backoffMs: number;
  readonly leaseMs: number;
}

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
  /** json, pretty, or auto (pretty when stdout is a terminal). */
  readonly logFormat: 'auto' | 'json' | 'pretty';
  /** PostgreSQL pool size per process. */
  readonly databasePoolSize: number;
  /** PostgreSQL: longest a statement may run (0 = no limit); SQLite: longest wait for the write lock. Null: the store's default. */
  readonly databaseStatementTimeoutMs: number | null;
  /** Students read per page; a list longer than one page is streamed. 0: never stream. */
  readonly listPageRows: number;
  /** Bytes of answers kept for cacheable operations while the data is unchanged (0: none kept). */
  readonly answerCacheBytes: number;
  /** On shutdown: how long idle keep-alive connections stay open for requests already on their way. */
  readonly shutdownGraceMs: number;
  /** On shutdown: the longest wait for requests in progress before connections are cut. */
  readonly shutdownTimeoutMs: number;
  /** Worker processes (`auto` already resolved to the core count). */
  readonly workers: number;
  /** Adds X-Sis-Worker-Pid to answers (to see which process served a request). */
  readonly debugHeaders: boolean;
  /** SHA-256 digests of the accepted API keys; empty = no key required. */
  readonly apiKeys: readonly Buffer[];
  /** Service files that require a key; null = all. */
  readonly apiKeyServices: readonly string[] | null;
  readonly authRealm: string;
  /** Allowed client blocks (`addr/prefix`); empty = everyone. */
  readonly allowFrom: readonly string[];
  /** Service files the allow-list applies to; null = all. */
  readonly allowFromServices: readonly string[] | null;
  /** Requests per client address and window; null = unlimited. */
  readonly rateLimit: RateLimit | null;
  readonly redisUrl: string | null;
  /** PEM certificate and key: the server speaks HTTPS. */
  readonly tls: { readonly cert: Buffer; readonly key: Buffer } | null;
  /** documented: marks and push settings answer empty, as the spec shows them; extended: with their fields. */
  readonly results: ResultsMode;
  /** Most codes AuthCode accepts for one phone within an hour; 0: no limit. */
  readonly authCodesPerHour: number;
  /** The SMS text; `{code}` stands for the code. */
  readonly smsMessage: string;
  /** Where codes are delivered; null: messages wait in the outbox. */
  readonly smsWebhook: SmsWebhook | null;
  readonly outbox: OutboxSettings;
}

export const DEFAULT_SMS_MESSAGE = 'Your verification code is {code}';

export const DEFAULT_DATABASE_URL = 'sqlite:./data/sis.db';

export class ConfigError extends Error {
  readonly code = 'ERR_CONFIG';
  constructor(readonly problems: readonly string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

type Env = Readonly<Record<string, string | undefined>>;

export function loadConfig(processEnv: Env = process.env): Config {
  const merged = mergeConfigFile(processEnv);
  const env = merged.env;
  const problems: string[] = [...merged.problems];
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
  const optionalInt = (name: string, min: number, max: number): number | null => {
    const raw = env[name];
    return raw === undefined || raw === '' ? null : int(name, min, min, max);
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

  const parsed = <T>(name: string, fallback: T, parse: (raw: string) => Parsed<T>): T => {
    const raw = env[name];
    if (raw === undefined || raw.trim() === '') return fallback;
    const result = parse(raw);
    if ('problem' in result) {
      // API keys may be pasted in clear by mistake: never echo them.
      problems.push(name === 'SIS_API_KEYS' ? `${name}: ${result.problem}` : `${name}=${JSON.stringify(raw)}: ${result.problem}`);
      return fallback;
    }
    return result.value;
  };
  const serviceNames = services.map((s) => s.name);
  const databaseUrl = str('SIS_DATABASE_URL', DEFAULT_DATABASE_URL);
  try {
    parseDatabaseUrl(databaseUrl);
  } catch (error) {
    if (!(error instanceof DatabaseUrlError)) throw error;
    problems.push(`SIS_DATABASE_URL: ${error.message}`); // the message shows the URL without its password
  }
  const host = str('HOST', '0.0.0.0');
  if (isIP(host) === 0 && !/^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$/.test(host)) {
    problems.push(`HOST=${JSON.stringify(host)}: expected an IP address or a host name`);
  }
  const redisUrl = str('SIS_REDIS_URL', '');
  if (redisUrl !== '' && !/^rediss?:\/\/[^\s]+$/.test(redisUrl)) {
    problems.push(`SIS_REDIS_URL=${JSON.stringify(redisUrl.replace(/\/\/[^@/]*@/, '//***@'))}: expected redis://[user:password@]host[:port][/db] or rediss://…`);
  }

  const config: Config = {
    port: int('PORT', 8080, 0, 65535),
    host,
    namespace,
    databaseUrl,
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
    logFormat: oneOf('SIS_LOG_FORMAT', 'auto', ['auto', 'json', 'pretty'] as const),
    databasePoolSize: int('SIS_DATABASE_POOL_SIZE', 10, 1, 1000),
    databaseStatementTimeoutMs: optionalInt('SIS_DATABASE_STATEMENT_TIMEOUT_MS', 0, 86_400_000),
    listPageRows: int('SIS_LIST_PAGE_ROWS', 1000, 0, 1_000_000),
    answerCacheBytes: int('SIS_ANSWER_CACHE_BYTES', 16 * 1024 * 1024, 0, 1024 * 1024 * 1024),
    shutdownGraceMs: int('SIS_SHUTDOWN_GRACE_MS', 5_000, 0, 3_600_000),
    shutdownTimeoutMs: int('SIS_SHUTDOWN_TIMEOUT_MS', 30_000, 100, 3_600_000),
    workers: parsed('SIS_WORKERS', 1, parseWorkers),
    debugHeaders: bool('SIS_DEBUG_HEADERS', false),
    apiKeys: parsed('SIS_API_KEYS', [], parseApiKeys),
    apiKeyServices: parsed('SIS_API_KEY_SERVICES', null, (raw) => parseServiceList(raw, serviceNames)),
    authRealm: str('SIS_AUTH_REALM', 'Student Information'),
    allowFrom: parsed('SIS_ALLOW_FROM', [], parseCidrList),
    allowFromServices: parsed('SIS_ALLOW_FROM_SERVICES', null, (raw) => parseServiceList(raw, serviceNames)),
    rateLimit: parsed('SIS_RATE_LIMIT', null, parseRateLimit),
    redisUrl: redisUrl === '' ? null : redisUrl,
    tls: loadTls(env['SIS_TLS_CERT'], env['SIS_TLS_KEY'], problems),
    results: oneOf('SIS_RESULTS', 'documented', ['documented', 'extended'] as const),
    authCodesPerHour: int('SIS_AUTH_CODES_PER_HOUR', 5, 0, 1_000_000),
    smsMessage: str('SIS_SMS_MESSAGE', DEFAULT_SMS_MESSAGE),
    smsWebhook: null,
    outbox: {
      pollMs: int('SIS_OUTBOX_POLL_MS', 1000, 10, 3_600_000),
      maxAttempts: int('SIS_OUTBOX_MAX_ATTEMPTS', 8, 1, 100),
      backoffMs: int('SIS_OUTBOX_BACKOFF_MS', 1000, 1, 3_600_000),
      leaseMs: int('SIS_OUTBOX_LEASE_MS', 30_000, 1000, 3_600_000),
    },
  };
  if (!config.smsMessage.includes('{code}')) {
    problems.push(`SIS_SMS_MESSAGE=${JSON.stringify(config.smsMessage)}: expected a text with {code} where the code goes`);
  }
  const smsWebhook = loadSmsWebhook(env, int('SIS_SMS_WEBHOOK_TIMEOUT_MS', 10_000, 100, 300_000), problems);
  if (smsWebhook !== null && config.outbox.leaseMs <= smsWebhook.timeoutMs) {
    problems.push(
      `SIS_OUTBOX_LEASE_MS=${config.outbox.leaseMs}: expected more than SIS_SMS_WEBHOOK_TIMEOUT_MS (${smsWebhook.timeoutMs}), or a delivery still waiting for the gateway could be taken by another worker`,
    );
  }
  if (/["\\\r\n]/.test(config.authRealm)) {
    problems.push(`SIS_AUTH_REALM=${JSON.stringify(config.authRealm)}: expected text without quotes, backslashes or line breaks`);
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return { ...config, smsWebhook };
}

/** The gateway settings; neither the URL (it may carry credentials) nor the secret is ever echoed. */
function loadSmsWebhook(env: Env, timeoutMs: number, problems: string[]): SmsWebhook | null {
  const url = env['SIS_SMS_WEBHOOK_URL'] ?? '';
  const secret = env['SIS_SMS_WEBHOOK_SECRET'] ?? '';
  if (url === '') {
    if (secret !== '') problems.push('SIS_SMS_WEBHOOK_SECRET: set, but SIS_SMS_WEBHOOK_URL is not; set both or neither');
    return null;
  }
  let ok = false;
  try {
    const parsed = new URL(url);
    ok = parsed.protocol === 'http:' || parsed.protocol === 'https:';
  } catch {
    // reported below
  }
  if (!ok) problems.push('SIS_SMS_WEBHOOK_URL: expected an absolute http:// or https:// URL');
  if (secret === '') problems.push('SIS_SMS_WEBHOOK_SECRET: required when SIS_SMS_WEBHOOK_URL is set (it signs every message)');
  return ok && secret !== '' ? { url, secret, timeoutMs } : null;
}
