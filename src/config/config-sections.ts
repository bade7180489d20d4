/**
 * The configuration in sections, each reading its own settings (default, bounds and parsing from
 * the settings table) and checking what only makes sense together. Each section's fields are
 * checked against Config (`satisfies`), and loadConfig's object for completeness.
 */
import type { Ipv6Prefix, Nat64Prefixes } from '../address/client-network.js';
import type { SmsRules } from '../sms/sms-rules.js';
import type { Config, SmsWebhook } from './config-types.js';
import { DEFAULT_TEMPLATE } from './gateway-settings.js';
import type { GatewayName, SmsGatewaySettings } from './gateway-settings.js';
import { isHttpUrl } from './parse-settings.js';
import type { RateLimit } from './parse-settings.js';
import { checkRetention } from './retention-settings.js';
import type { SettingReader } from './setting-reader.js';
import { withHomeCountry } from './sms-guard-settings.js';
import { loadTls } from './tls-files.js';

/** Where and how the server listens, and the limits of one request. */
export function httpSettings(r: SettingReader) {
  return {
    port: r.read('PORT'),
    host: r.read('HOST'),
    namespace: r.read('SIS_NAMESPACE'),
    basePath: r.read('SIS_BASE_PATH'),
    publicUrl: r.read('SIS_PUBLIC_URL'),
    trustedProxies: r.read('SIS_TRUSTED_PROXIES'),
    maxBodyBytes: r.read('SIS_MAX_BODY_BYTES'),
    maxXmlDepth: r.read('SIS_MAX_XML_DEPTH'),
    maxFormFields: r.read('SIS_MAX_FORM_FIELDS'),
    requestTimeoutMs: r.read('SIS_REQUEST_TIMEOUT_MS'),
    headersTimeoutMs: r.read('SIS_HEADERS_TIMEOUT_MS'),
    keepAliveTimeoutMs: r.read('SIS_KEEP_ALIVE_TIMEOUT_MS'),
    shutdownGraceMs: r.read('SIS_SHUTDOWN_GRACE_MS'),
    shutdownTimeoutMs: r.read('SIS_SHUTDOWN_TIMEOUT_MS'),
    workers: r.read('SIS_WORKERS'),
    debugHeaders: r.read('SIS_DEBUG_HEADERS'),
    tls: loadTls(r.read('SIS_TLS_CERT'), r.read('SIS_TLS_KEY'), r.problems),
  } satisfies Partial<Config>;
}

export function databaseSettings(r: SettingReader) {
  return {
    databaseUrl: r.read('SIS_DATABASE_URL'),
    databasePoolSize: r.read('SIS_DATABASE_POOL_SIZE'),
    databaseStatementTimeoutMs: r.read('SIS_DATABASE_STATEMENT_TIMEOUT_MS'),
    databaseConnectTimeoutMs: r.read('SIS_DATABASE_CONNECT_TIMEOUT_MS'),
    databaseQueryTimeoutMs: r.read('SIS_DATABASE_QUERY_TIMEOUT_MS'),
    databaseMaxWaiting: r.read('SIS_DATABASE_MAX_WAITING'),
    commandQueryTimeoutMs: r.read('SIS_COMMAND_QUERY_TIMEOUT_MS'),
    commandRetryMs: r.read('SIS_COMMAND_RETRY_MS'),
    listPageRows: r.read('SIS_LIST_PAGE_ROWS'),
    answerCacheBytes: r.read('SIS_ANSWER_CACHE_BYTES'),
    staleIfErrorMs: r.read('SIS_STALE_IF_ERROR_MS'),
    staleAnswersBytes: r.read('SIS_STALE_ANSWERS_BYTES'),
    staleAfterMs: r.read('SIS_STALE_AFTER_MS'),
  } satisfies Partial<Config>;
}

export function loggingSettings(r: SettingReader) {
  return {
    logLevel: r.read('LOG_LEVEL'),
    logFormat: r.read('SIS_LOG_FORMAT'),
    logSuccessSample: r.read('SIS_LOG_SUCCESS_SAMPLE'),
    otlpEndpoint: r.read('OTEL_EXPORTER_OTLP_ENDPOINT'),
  } satisfies Partial<Config>;
}

/**
 * The prefix a native IPv6 client counts by: SIS_CLIENT_IPV6_PREFIX, else its old name
 * SIS_SMS_IPV6_PREFIX (so a configuration written for it keeps working); both set and different
 * is a problem, as one of them would be ignored.
 */
function clientIpv6Prefix(r: SettingReader): Ipv6Prefix {
  const old = r.read('SIS_SMS_IPV6_PREFIX');
  const prefix = r.read('SIS_CLIENT_IPV6_PREFIX');
  if (old === null || !r.isSet('SIS_CLIENT_IPV6_PREFIX')) return old ?? prefix;
  if (old !== prefix)
    r.problems.push(
      `SIS_SMS_IPV6_PREFIX: the old name of SIS_CLIENT_IPV6_PREFIX, set to ${old} while that says ${prefix}; set only SIS_CLIENT_IPV6_PREFIX`,
    );
  return prefix;
}

/**
 * The requests a native IPv6 client's /48 may make in the rate limit's window (SIS_RATE_LIMIT_IPV6_48),
 * or null when it is not counted; fewer than one client's own is a problem (one /64 would then
 * use up its neighbours' share).
 */
function rateLimitIpv6Site(r: SettingReader, rule: RateLimit | null, prefix: Ipv6Prefix): number | null {
  const allowance = r.read('SIS_RATE_LIMIT_IPV6_48');
  if (rule === null || prefix === 48) return null;
  const requests = 'times' in allowance ? allowance.times * rule.limit : allowance.requests;
  if (requests === 0) return null;
  if (requests < rule.limit)
    r.problems.push(
      `SIS_RATE_LIMIT_IPV6_48=${requests}: expected at least SIS_RATE_LIMIT's ${rule.limit} (a /48 holds many clients), or 0 to count no /48`,
    );
  return Math.min(requests, Number.MAX_SAFE_INTEGER);
}

/** API keys, the address allow-list, rate limits and their Redis. */
export function accessSettings(r: SettingReader) {
  const rateLimit = r.read('SIS_RATE_LIMIT');
  const ipv6Prefix = clientIpv6Prefix(r);
  return {
    apiKeys: r.read('SIS_API_KEYS'),
    apiKeyServices: r.read('SIS_API_KEY_SERVICES'),
    authRealm: r.read('SIS_AUTH_REALM'),
    allowFrom: r.read('SIS_ALLOW_FROM'),
    allowFromServices: r.read('SIS_ALLOW_FROM_SERVICES'),
    rateLimit,
    rateLimitIpv6Site: rateLimitIpv6Site(r, rateLimit, ipv6Prefix),
    clientIpv6Prefix: ipv6Prefix,
    clientNat64Prefixes: r.read('SIS_CLIENT_NAT64_PREFIXES'),
    redisUrl: r.read('SIS_REDIS_URL'),
    redisTimeoutMs: r.read('SIS_REDIS_TIMEOUT_MS'),
  } satisfies Partial<Config>;
}

/** AuthCode's limit, its SMS text and gateway, and the outbox that delivers. */
export function smsSettings(r: SettingReader) {
  const outbox = {
    pollMs: r.read('SIS_OUTBOX_POLL_MS'),
    maxAttempts: r.read('SIS_OUTBOX_MAX_ATTEMPTS'),
    backoffMs: r.read('SIS_OUTBOX_BACKOFF_MS'),
    leaseMs: r.read('SIS_OUTBOX_LEASE_MS'),
  };
  const smsWebhook = loadSmsWebhook(r, r.read('SIS_SMS_WEBHOOK_TIMEOUT_MS'));
  if (outbox.leaseMs <= r.read('SIS_SMS_WEBHOOK_TIMEOUT_MS')) {
    r.problems.push(
      `SIS_OUTBOX_LEASE_MS=${outbox.leaseMs}: expected more than SIS_SMS_WEBHOOK_TIMEOUT_MS (${r.read('SIS_SMS_WEBHOOK_TIMEOUT_MS')}), or a delivery still waiting for the gateway could be taken by another worker`,
    );
  }
  const smsGateways = loadGateways(r, smsWebhook !== null, r.read('SIS_SMS_WEBHOOK_TIMEOUT_MS'));
  return {
    authCodesPerHour: r.read('SIS_AUTH_CODES_PER_HOUR'),
    smsMessage: smsGateways.template,
    smsGateways,
    smsWebhook,
    outbox,
  } satisfies Partial<Config>;
}

/**
 * AuthCode's protection of the SMS bill (docs/sms.md): the number rules, the velocity limits, the
 * trusted networks and test numbers, retries and the guard's modes.
 */
export function smsGuardSettings(
  r: SettingReader,
  clientIpv6Prefix: Ipv6Prefix,
  clientNat64Prefixes: Nat64Prefixes,
): SmsRules {
  const types = r.read('SIS_SMS_REFUSE_TYPES');
  const region = r.read('SIS_SMS_DEFAULT_REGION');
  return {
    phone: {
      defaultRegion: region,
      refuseInvalid: types.invalid,
      refuseTypes: types.types,
      countries: r.read('SIS_SMS_COUNTRIES'),
    },
    velocity: {
      backoff: r.read('SIS_AUTH_CODE_BACKOFF'),
      perAddressHour: r.read('SIS_AUTH_CODES_PER_ADDRESS_HOUR'),
      ipv6Prefix: clientIpv6Prefix,
      nat64Prefixes: clientNat64Prefixes,
      perIpv6SiteHour: r.read('SIS_AUTH_CODES_PER_IPV6_48_HOUR'),
      perRangeHour: r.read('SIS_AUTH_CODES_PER_RANGE_HOUR'),
      countryDaily: withHomeCountry(r.read('SIS_SMS_COUNTRY_DAILY_LIMITS'), region),
      hourlyBudget: r.read('SIS_SMS_HOURLY_BUDGET'),
      dailyBudget: r.read('SIS_SMS_DAILY_BUDGET'),
    },
    trustedAddresses: r.read('SIS_SMS_TRUSTED_ADDRESSES'),
    trustedEmbedded: r.read('SIS_SMS_TRUSTED_EMBEDDED'),
    testNumbers: r.read('SIS_SMS_TEST_NUMBERS'),
    testCodesPerHour: r.read('SIS_SMS_TEST_CODES_PER_HOUR'),
    repeatMs: r.read('SIS_AUTH_CODE_REPEAT_MS'),
    monitored: r.read('SIS_SMS_GUARD'),
  };
}

/** How long personal data is kept; a code retention under the hourly window is refused while the limit is on. */
export function retentionSettings(r: SettingReader, authCodesPerHour: number) {
  const retention = {
    authCodesMs: r.read('SIS_AUTH_CODE_RETENTION_MS'),
    outboxMs: r.read('SIS_OUTBOX_RETENTION_MS'),
  };
  checkRetention(retention, authCodesPerHour, r.problems);
  return { retention } satisfies Partial<Config>;
}

/** HMAC keys shorter than this are refused: a short key can be guessed offline from one signed body. */
const MIN_SECRET_BYTES = 32;

/**
 * The gateway settings; neither the URL (it may carry credentials) nor a secret is ever echoed.
 * Every HMAC secret (the webhook's, the receipts') is at least MIN_SECRET_BYTES long.
 */
function loadSmsWebhook(r: SettingReader, timeoutMs: number): SmsWebhook | null {
  const url = r.read('SIS_SMS_WEBHOOK_URL');
  const secret = r.read('SIS_SMS_WEBHOOK_SECRET');
  const receiptPath = r.read('SIS_SMS_RECEIPT_PATH');
  const receiptSecret = r.read('SIS_SMS_RECEIPT_SECRET');
  checkSecretLength(r, 'SIS_SMS_WEBHOOK_SECRET', secret);
  checkSecretLength(r, 'SIS_SMS_RECEIPT_SECRET', receiptSecret);
  if (receiptSecret !== '' && receiptPath === null)
    r.problems.push('SIS_SMS_RECEIPT_SECRET: set, but SIS_SMS_RECEIPT_PATH is not; set both or neither');
  if (url === '') {
    if (secret !== '')
      r.problems.push('SIS_SMS_WEBHOOK_SECRET: set, but SIS_SMS_WEBHOOK_URL is not; set both or neither');
    if (receiptPath !== null && r.read('SIS_SMS_GATEWAY').includes('webhook'))
      r.problems.push(
        'SIS_SMS_RECEIPT_PATH: set, but SIS_SMS_WEBHOOK_URL is not; receipts are of messages the webhook sent',
      );
    return null;
  }
  const ok = isHttpUrl(url);
  if (!ok) r.problems.push('SIS_SMS_WEBHOOK_URL: expected an absolute http:// or https:// URL');
  if (secret === '')
    r.problems.push('SIS_SMS_WEBHOOK_SECRET: required when SIS_SMS_WEBHOOK_URL is set (it signs every message)');
  // The webhook's secret is the documented fallback: a gateway that signs both with one key still works.
  return ok && secret !== ''
    ? { url, secret, timeoutMs, receiptPath, receiptSecret: receiptSecret === '' ? secret : receiptSecret }
    : null;
}

/** `why`: what the secret keys, when that is not plain from its name; `how`: how to get a long one. */
function checkSecretLength(
  r: SettingReader,
  name: string,
  value: string,
  why = '',
  how = 'a random key, such as the output of openssl rand -hex 32',
): void {
  const bytes = Buffer.byteLength(value);
  if (value !== '' && bytes < MIN_SECRET_BYTES)
    r.problems.push(`${name}: ${bytes} bytes, expected at least ${MIN_SECRET_BYTES}${why} (${how})`);
}

/**
 * Every secret that authenticates a provider's report is at least MIN_SECRET_BYTES long: a short
 * one is guessed online, one report at a time (docs/security.md, Provider reports). The Kannel
 * password and the Twilio token key reports only when reports are asked for (SIS_SMS_CALLBACK_URL).
 */
function checkReportSecrets(
  r: SettingReader,
  named: readonly GatewayName[],
  reports: boolean,
  secrets: { kannel: string; twilio: string; vonage: string | null; unifonic: string | null },
): void {
  if (reports && named.includes('kannel'))
    checkSecretLength(
      r,
      'SIS_SMS_KANNEL_PASSWORD',
      secrets.kannel,
      ", since it keys the delivery reports' token",
      "a random password, set in Kannel's sendsms-user too",
    );
  if (reports && named.includes('twilio'))
    checkSecretLength(
      r,
      'SIS_SMS_TWILIO_AUTH_TOKEN',
      secrets.twilio,
      ', since it keys X-Twilio-Signature',
      "the Auth Token of Twilio's console, 32 characters",
    );
  checkSecretLength(
    r,
    'SIS_SMS_VONAGE_SIGNATURE_SECRET',
    secrets.vonage ?? '',
    '',
    "the signature secret of Vonage's dashboard",
  );
  checkSecretLength(r, 'SIS_SMS_UNIFONIC_WEBHOOK_TOKEN', secrets.unifonic ?? '');
}

/** Beside the legacy service: the mode and its limits; a mode other than off needs SIS_LEGACY_URL. */
export function shadowSettings(r: SettingReader) {
  const mode = r.read('SIS_SHADOW');
  const legacyUrl = r.read('SIS_LEGACY_URL');
  const on = mode.default !== 'off' || mode.overrides.some(([, m]) => m !== 'off');
  if (on && legacyUrl === null && !r.problems.some((p) => p.startsWith('SIS_LEGACY_URL')))
    r.problems.push(
      `SIS_LEGACY_URL: required when SIS_SHADOW is not off (the legacy service's base URL, e.g. http://old-host/SchoolService/)`,
    );
  return {
    shadow: {
      mode,
      legacyUrl,
      sample: r.read('SIS_SHADOW_SAMPLE'),
      timeoutMs: r.read('SIS_SHADOW_TIMEOUT_MS'),
      maxInFlight: r.read('SIS_SHADOW_MAX_IN_FLIGHT'),
      maxAnswerBytes: r.read('SIS_SHADOW_MAX_ANSWER_BYTES'),
      fallback: r.read('SIS_SHADOW_FALLBACK'),
      keep: r.read('SIS_SHADOW_KEEP'),
      retentionMs: r.read('SIS_SHADOW_RETENTION_MS'),
      recheck: r.read('SIS_SHADOW_RECHECK'),
      listOrder: r.read('SIS_SHADOW_LIST_ORDER'),
      routeFrom: r.read('SIS_SHADOW_ROUTE_FROM'),
    },
  } satisfies Partial<Config>;
}

/**
 * Reads the gateways' settings and checks each named gateway's (credentials present, URLs valid);
 * `webhookReady`: the webhook's own settings (read with the outbox) are complete.
 */
function loadGateways(r: SettingReader, webhookReady: boolean, timeoutMs: number): SmsGatewaySettings {
  const named = r.read('SIS_SMS_GATEWAY');
  const need = (name: GatewayName, settings: readonly [string, string][]): boolean => {
    if (!named.includes(name)) return false;
    const missing = settings.filter(([, v]) => v === '').map(([n]) => n);
    for (const n of missing) r.problems.push(`${n}: required when SIS_SMS_GATEWAY names ${name}`);
    return missing.length === 0;
  };
  const url = (name: string, value: string): boolean => {
    if (isHttpUrl(value)) return true;
    r.problems.push(`${name}: expected an absolute http:// or https:// URL`);
    return false;
  };
  // Every setting read, named or not (the settings test holds that the config reads each one).
  const k = {
    url: r.read('SIS_SMS_KANNEL_URL'),
    user: r.read('SIS_SMS_KANNEL_USER'),
    password: r.read('SIS_SMS_KANNEL_PASSWORD'),
    smsc: r.read('SIS_SMS_KANNEL_SMSC') || null,
  };
  const p = {
    url: r.read('SIS_SMS_SMPP_URL') ?? '',
    systemId: r.read('SIS_SMS_SMPP_SYSTEM_ID'),
    password: r.read('SIS_SMS_SMPP_PASSWORD'),
    bind: r.read('SIS_SMS_SMPP_BIND'),
    window: r.read('SIS_SMS_SMPP_WINDOW'),
  };
  const t = {
    accountSid: r.read('SIS_SMS_TWILIO_ACCOUNT_SID'),
    authToken: r.read('SIS_SMS_TWILIO_AUTH_TOKEN'),
    apiUrl: r.read('SIS_SMS_TWILIO_API_URL') ?? 'https://api.twilio.com',
  };
  const v = {
    apiKey: r.read('SIS_SMS_VONAGE_API_KEY'),
    apiSecret: r.read('SIS_SMS_VONAGE_API_SECRET'),
    signatureSecret: r.read('SIS_SMS_VONAGE_SIGNATURE_SECRET') || null,
    signatureMethod: r.read('SIS_SMS_VONAGE_SIGNATURE_METHOD'),
    apiUrl: r.read('SIS_SMS_VONAGE_API_URL') ?? 'https://rest.nexmo.com',
  };
  const u = {
    appSid: r.read('SIS_SMS_UNIFONIC_APP_SID'),
    webhookToken: r.read('SIS_SMS_UNIFONIC_WEBHOOK_TOKEN') || null,
    apiUrl: r.read('SIS_SMS_UNIFONIC_API_URL') ?? 'https://el.cloud.unifonic.com',
  };
  const kannel =
    need('kannel', [
      ['SIS_SMS_KANNEL_URL', k.url],
      ['SIS_SMS_KANNEL_USER', k.user],
      ['SIS_SMS_KANNEL_PASSWORD', k.password],
    ]) && url('SIS_SMS_KANNEL_URL', k.url)
      ? k
      : null;
  const smpp = need('smpp', [
    ['SIS_SMS_SMPP_URL', p.url],
    ['SIS_SMS_SMPP_SYSTEM_ID', p.systemId],
    ['SIS_SMS_SMPP_PASSWORD', p.password],
  ])
    ? p
    : null;
  const twilio = need('twilio', [
    ['SIS_SMS_TWILIO_ACCOUNT_SID', t.accountSid],
    ['SIS_SMS_TWILIO_AUTH_TOKEN', t.authToken],
  ])
    ? t
    : null;
  const vonage = need('vonage', [
    ['SIS_SMS_VONAGE_API_KEY', v.apiKey],
    ['SIS_SMS_VONAGE_API_SECRET', v.apiSecret],
  ])
    ? v
    : null;
  const unifonic = need('unifonic', [['SIS_SMS_UNIFONIC_APP_SID', u.appSid]]) ? u : null;
  const callbackUrl = r.read('SIS_SMS_CALLBACK_URL');
  const receiptPath = r.read('SIS_SMS_RECEIPT_PATH');
  checkReportSecrets(r, named, callbackUrl !== null, {
    kannel: k.password,
    twilio: t.authToken,
    vonage: v.signatureSecret,
    unifonic: u.webhookToken,
  });
  if (callbackUrl !== null && receiptPath === null)
    r.problems.push(
      'SIS_SMS_CALLBACK_URL: set, but SIS_SMS_RECEIPT_PATH is not; it is that path as providers reach it',
    );
  else if (callbackUrl !== null && receiptPath !== null && !new URL(callbackUrl).pathname.endsWith(receiptPath))
    r.problems.push(
      `SIS_SMS_CALLBACK_URL: expected a URL whose path ends with SIS_SMS_RECEIPT_PATH (${receiptPath}), as providers reach it`,
    );
  const ready = { webhook: webhookReady, kannel, smpp, twilio, vonage, unifonic };
  // The webhook left without its URL is today's "no gateway": messages wait. A fallback needs every one.
  const names = named.length === 1 && named[0] === 'webhook' && !webhookReady ? [] : named;
  if (named.length > 1 && named.includes('webhook') && !webhookReady)
    r.problems.push('SIS_SMS_WEBHOOK_URL: required when SIS_SMS_GATEWAY names webhook beside other gateways');
  return {
    names: names.filter((n) => ready[n] !== null && ready[n] !== false),
    template: readTemplate(r),
    senderId: r.read('SIS_SMS_SENDER_ID'),
    timeoutMs,
    callbackUrl: callbackUrl === null ? null : callbackUrl.replace(/\/+$/, ''),
    receiptPath,
    kannel,
    smpp,
    twilio,
    vonage,
    unifonic,
  };
}

/** SIS_SMS_TEMPLATE, or its former name SIS_SMS_MESSAGE when only that is set. */
function readTemplate(r: SettingReader): string {
  const former = r.read('SIS_SMS_MESSAGE');
  const template = r.read('SIS_SMS_TEMPLATE');
  if (former === null) return template;
  if (template !== DEFAULT_TEMPLATE)
    r.problems.push('SIS_SMS_MESSAGE: the former name of SIS_SMS_TEMPLATE; set only SIS_SMS_TEMPLATE');
  return former;
}
