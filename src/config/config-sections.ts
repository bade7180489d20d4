/**
 * The configuration in sections, each reading its own settings (defaults from the settings
 * table) and checking what only makes sense together.
 */
import { isIP } from 'node:net';
import { services } from '../operations/index.js';
import { DatabaseUrlError, parseDatabaseUrl } from '../store/open/database-url.js';
import type { Config, SmsWebhook } from './config-types.js';
import { parseApiKeys, parseCidrList, parseRateLimit, parseServiceList, parseWorkers } from './parse-settings.js';
import { checkRetention, MAX_RETENTION_MS } from './retention-settings.js';
import type { SettingReader } from './setting-reader.js';
import { loadTls } from './tls-files.js';

type Section<K extends keyof Config> = Pick<Config, K>;

/** Where and how the server listens, and the limits of one request. */
export function httpSettings(
  r: SettingReader,
): Section<
  | 'port'
  | 'host'
  | 'namespace'
  | 'basePath'
  | 'publicUrl'
  | 'trustedProxies'
  | 'maxBodyBytes'
  | 'maxXmlDepth'
  | 'maxFormFields'
  | 'requestTimeoutMs'
  | 'headersTimeoutMs'
  | 'keepAliveTimeoutMs'
  | 'shutdownGraceMs'
  | 'shutdownTimeoutMs'
  | 'workers'
  | 'debugHeaders'
  | 'tls'
> {
  const namespace = r.str('SIS_NAMESPACE');
  if (/[\s"'<>&]/.test(namespace))
    r.problems.push(`SIS_NAMESPACE=${JSON.stringify(namespace)}: expected a URI without spaces, quotes, <, > or &`);
  const host = r.str('HOST');
  if (isIP(host) === 0 && !/^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$/.test(host))
    r.problems.push(`HOST=${JSON.stringify(host)}: expected an IP address or a host name`);
  const publicUrl = r.url('SIS_PUBLIC_URL');
  return {
    port: r.int('PORT', 0, 65535),
    host,
    namespace,
    basePath: basePath(r),
    publicUrl: publicUrl === null ? null : publicUrl.replace(/\/+$/, ''),
    trustedProxies: list(r.str('SIS_TRUSTED_PROXIES')),
    maxBodyBytes: r.int('SIS_MAX_BODY_BYTES', 1024, 1024 * 1024 * 1024),
    maxXmlDepth: r.int('SIS_MAX_XML_DEPTH', 4, 10_000),
    maxFormFields: r.int('SIS_MAX_FORM_FIELDS', 1, 1_000_000),
    requestTimeoutMs: r.int('SIS_REQUEST_TIMEOUT_MS', 100, 3_600_000),
    headersTimeoutMs: r.int('SIS_HEADERS_TIMEOUT_MS', 100, 3_600_000),
    keepAliveTimeoutMs: r.int('SIS_KEEP_ALIVE_TIMEOUT_MS', 0, 3_600_000),
    shutdownGraceMs: r.int('SIS_SHUTDOWN_GRACE_MS', 0, 3_600_000),
    shutdownTimeoutMs: r.int('SIS_SHUTDOWN_TIMEOUT_MS', 100, 3_600_000),
    workers: r.parsed('SIS_WORKERS', 1, parseWorkers),
    debugHeaders: r.bool('SIS_DEBUG_HEADERS'),
    tls: loadTls(r.str('SIS_TLS_CERT'), r.str('SIS_TLS_KEY'), r.problems),
  };
}

export function databaseSettings(
  r: SettingReader,
): Section<'databaseUrl' | 'databasePoolSize' | 'databaseStatementTimeoutMs' | 'listPageRows' | 'answerCacheBytes'> {
  const databaseUrl = r.str('SIS_DATABASE_URL');
  try {
    parseDatabaseUrl(databaseUrl);
  } catch (error) {
    if (!(error instanceof DatabaseUrlError)) throw error;
    r.problems.push(`SIS_DATABASE_URL: ${error.message}`); // the message shows the URL without its password
  }
  return {
    databaseUrl,
    databasePoolSize: r.int('SIS_DATABASE_POOL_SIZE', 1, 1000),
    databaseStatementTimeoutMs: r.intOrNull('SIS_DATABASE_STATEMENT_TIMEOUT_MS', 0, 86_400_000),
    listPageRows: r.int('SIS_LIST_PAGE_ROWS', 0, 1_000_000),
    answerCacheBytes: r.int('SIS_ANSWER_CACHE_BYTES', 0, 1024 * 1024 * 1024),
  };
}

export function loggingSettings(
  r: SettingReader,
): Section<'logLevel' | 'logFormat' | 'logSuccessSample' | 'otlpEndpoint'> {
  return {
    logLevel: r.oneOf('LOG_LEVEL', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const),
    logFormat: r.oneOf('SIS_LOG_FORMAT', ['auto', 'json', 'pretty'] as const),
    logSuccessSample: r.int('SIS_LOG_SUCCESS_SAMPLE', 0, 1_000_000),
    otlpEndpoint: r.url('OTEL_EXPORTER_OTLP_ENDPOINT'),
  };
}

/** API keys, the address allow-list, rate limits and their Redis. */
export function accessSettings(
  r: SettingReader,
): Section<'apiKeys' | 'apiKeyServices' | 'authRealm' | 'allowFrom' | 'allowFromServices' | 'rateLimit' | 'redisUrl'> {
  const serviceNames = services.map((s) => s.name);
  const authRealm = r.str('SIS_AUTH_REALM');
  if (/["\\\r\n]/.test(authRealm))
    r.problems.push(
      `SIS_AUTH_REALM=${JSON.stringify(authRealm)}: expected text without quotes, backslashes or line breaks`,
    );
  const redisUrl = r.str('SIS_REDIS_URL');
  if (redisUrl !== '' && !/^rediss?:\/\/[^\s]+$/.test(redisUrl)) {
    r.problems.push(
      `SIS_REDIS_URL=${JSON.stringify(redisUrl.replace(/\/\/[^@/]*@/, '//***@'))}: expected redis://[user:password@]host[:port][/db] or rediss://…`,
    );
  }
  return {
    apiKeys: r.parsed('SIS_API_KEYS', [], parseApiKeys, true),
    apiKeyServices: r.parsed('SIS_API_KEY_SERVICES', null, (raw) => parseServiceList(raw, serviceNames)),
    authRealm,
    allowFrom: r.parsed('SIS_ALLOW_FROM', [], parseCidrList),
    allowFromServices: r.parsed('SIS_ALLOW_FROM_SERVICES', null, (raw) => parseServiceList(raw, serviceNames)),
    rateLimit: r.parsed('SIS_RATE_LIMIT', null, parseRateLimit),
    redisUrl: redisUrl === '' ? null : redisUrl,
  };
}

/** AuthCode's limit, its SMS text and gateway, and the outbox that delivers. */
export function smsSettings(r: SettingReader): Section<'authCodesPerHour' | 'smsMessage' | 'smsWebhook' | 'outbox'> {
  const smsMessage = r.str('SIS_SMS_MESSAGE');
  if (!smsMessage.includes('{code}'))
    r.problems.push(`SIS_SMS_MESSAGE=${JSON.stringify(smsMessage)}: expected a text with {code} where the code goes`);
  const outbox = {
    pollMs: r.int('SIS_OUTBOX_POLL_MS', 10, 3_600_000),
    maxAttempts: r.int('SIS_OUTBOX_MAX_ATTEMPTS', 1, 100),
    backoffMs: r.int('SIS_OUTBOX_BACKOFF_MS', 1, 3_600_000),
    leaseMs: r.int('SIS_OUTBOX_LEASE_MS', 1000, 3_600_000),
  };
  const smsWebhook = loadSmsWebhook(r, r.int('SIS_SMS_WEBHOOK_TIMEOUT_MS', 100, 300_000));
  if (smsWebhook !== null && outbox.leaseMs <= smsWebhook.timeoutMs) {
    r.problems.push(
      `SIS_OUTBOX_LEASE_MS=${outbox.leaseMs}: expected more than SIS_SMS_WEBHOOK_TIMEOUT_MS (${smsWebhook.timeoutMs}), or a delivery still waiting for the gateway could be taken by another worker`,
    );
  }
  return { authCodesPerHour: r.int('SIS_AUTH_CODES_PER_HOUR', 0, 1_000_000), smsMessage, smsWebhook, outbox };
}

/** How long personal data is kept; a code retention under the hourly window is refused while the limit is on. */
export function retentionSettings(r: SettingReader, authCodesPerHour: number): Section<'retention'> {
  const retention = {
    authCodesMs: r.int('SIS_AUTH_CODE_RETENTION_MS', 0, MAX_RETENTION_MS),
    outboxMs: r.int('SIS_OUTBOX_RETENTION_MS', 0, MAX_RETENTION_MS),
  };
  checkRetention(retention, authCodesPerHour, r.problems);
  return { retention };
}

/** With leading and trailing slash ("/" or "/School/"). */
function basePath(r: SettingReader): string {
  const raw = r.str('SIS_BASE_PATH');
  const withSlash = raw.endsWith('/') ? raw : `${raw}/`;
  if (/^\/([A-Za-z0-9._~-]+\/)*$/.test(withSlash)) return withSlash;
  r.problems.push(`SIS_BASE_PATH=${JSON.stringify(raw)}: expected a path such as / or /School/`);
  return '/';
}

const list = (raw: string): string[] =>
  raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');

/** The gateway settings; neither the URL (it may carry credentials) nor the secret is ever echoed. */
function loadSmsWebhook(r: SettingReader, timeoutMs: number): SmsWebhook | null {
  const url = r.str('SIS_SMS_WEBHOOK_URL');
  const secret = r.str('SIS_SMS_WEBHOOK_SECRET');
  if (url === '') {
    if (secret !== '')
      r.problems.push('SIS_SMS_WEBHOOK_SECRET: set, but SIS_SMS_WEBHOOK_URL is not; set both or neither');
    return null;
  }
  let ok = false;
  try {
    const parsed = new URL(url);
    ok = parsed.protocol === 'http:' || parsed.protocol === 'https:';
  } catch {
    // reported below
  }
  if (!ok) r.problems.push('SIS_SMS_WEBHOOK_URL: expected an absolute http:// or https:// URL');
  if (secret === '')
    r.problems.push('SIS_SMS_WEBHOOK_SECRET: required when SIS_SMS_WEBHOOK_URL is set (it signs every message)');
  return ok && secret !== '' ? { url, secret, timeoutMs } : null;
}

/** Beside the legacy service: the mode and its limits; a mode other than off needs SIS_LEGACY_URL. */
export function shadowSettings(r: SettingReader): Section<'shadow'> {
  const mode = r.oneOf('SIS_SHADOW', ['off', 'compare', 'legacy'] as const);
  const legacyUrl = r.url('SIS_LEGACY_URL');
  if (mode !== 'off' && legacyUrl === null && !r.problems.some((p) => p.startsWith('SIS_LEGACY_URL')))
    r.problems.push(
      `SIS_LEGACY_URL: required when SIS_SHADOW=${mode} (the legacy service's base URL, e.g. http://old-host/SchoolService/)`,
    );
  if (legacyUrl !== null && /[?#]/.test(legacyUrl))
    r.problems.push(`SIS_LEGACY_URL=${JSON.stringify(legacyUrl)}: expected a base URL without query or fragment`);
  const sampleText = r.str('SIS_SHADOW_SAMPLE');
  const sample = Number(sampleText);
  if (!/^\s*(0|1|0?\.\d+|1\.0*)\s*$/.test(sampleText) || !(sample >= 0 && sample <= 1))
    r.problems.push(
      `SIS_SHADOW_SAMPLE=${JSON.stringify(sampleText)}: expected a fraction from 0 to 1, such as 1, 0.5 or 0.01`,
    );
  return {
    shadow: {
      mode,
      legacyUrl: legacyUrl === null ? null : legacyUrl.endsWith('/') ? legacyUrl : `${legacyUrl}/`,
      sample: Number.isFinite(sample) && sample >= 0 && sample <= 1 ? sample : 1,
      timeoutMs: r.int('SIS_SHADOW_TIMEOUT_MS', 10, 600_000),
      maxInFlight: r.int('SIS_SHADOW_MAX_IN_FLIGHT', 1, 100_000),
      maxAnswerBytes: r.int('SIS_SHADOW_MAX_ANSWER_BYTES', 1024, 1024 * 1024 * 1024),
      fallback: r.bool('SIS_SHADOW_FALLBACK'),
      keep: r.int('SIS_SHADOW_KEEP', 0, 10_000_000),
      retentionMs: r.int('SIS_SHADOW_RETENTION_MS', 0, MAX_RETENTION_MS),
    },
  };
}
