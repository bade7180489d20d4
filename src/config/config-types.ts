/** The configuration as the service uses it, read and checked once at start (config.ts). */
import type { Ipv6Prefix, Nat64Prefixes } from '../address/client-network.js';
import type { ResultsMode } from '../operations/index.js';
import type { SmsRules } from '../sms/sms-rules.js';
import type { SmsGatewaySettings } from './gateway-settings.js';
import type { RateLimit } from './parse-settings.js';
import type { RetentionSettings } from './retention-settings.js';
import type { SettingValue } from './settings.js';

/** The SMS gateway AuthCode's messages are posted to. */
export interface SmsWebhook {
  readonly url: string;
  /** Keys the HMAC-SHA256 signature of each body. */
  readonly secret: string;
  readonly timeoutMs: number;
  /** Where the gateway POSTs delivery receipts; null: no receipts. */
  readonly receiptPath: string | null;
  /** Keys the receipts' HMAC: SIS_SMS_RECEIPT_SECRET, else (the documented fallback) the webhook's secret. */
  readonly receiptSecret: string;
}

/** How the outbox worker delivers: see src/outbox/outbox-worker.ts. */
export interface OutboxSettings {
  readonly pollMs: number;
  readonly maxAttempts: number;
  /** Delay before the second attempt; it doubles with each attempt, up to 5 minutes (or this, when longer). */
  readonly backoffMs: number;
  readonly leaseMs: number;
}

/** Running beside the legacy service (docs/migrating.md); mode `off` leaves the rest unused. */
export interface ShadowSettings {
  /** The default mode and its overrides by operation or service file (checked against the contract at start). */
  readonly mode: SettingValue<'SIS_SHADOW'>;
  /** The legacy service's base URL, with a trailing slash; null only when the mode is off. */
  readonly legacyUrl: string | null;
  /** Fraction of requests compared, 0 to 1. */
  readonly sample: number;
  readonly timeoutMs: number;
  readonly maxInFlight: number;
  /** Largest answer read; a larger legacy answer is legacy-failed. */
  readonly maxAnswerBytes: number;
  /** Legacy mode: we answer when the legacy cannot (else 502). */
  readonly fallback: boolean;
  /** Most differences kept as examples. */
  readonly keep: number;
  /** 0: kept forever. */
  readonly retentionMs: number;
  /** A read compared different is asked of the legacy once more (noisy or different). */
  readonly recheck: boolean;
  /** List items in another order: reported (an `order` difference) or ignored. */
  readonly listOrder: SettingValue<'SIS_SHADOW_LIST_ORDER'>;
  /** Addresses and CIDR blocks whose X-Shadow-Route is honoured, as `addr/prefix`. */
  readonly routeFrom: readonly string[];
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
  /** Proxies whose X-Forwarded-* headers are believed: addresses and CIDR blocks, normalised as `addr/prefix`. */
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
  readonly helpTestForm: SettingValue<'SIS_HELP_TEST_FORM'>;
  readonly logLevel: SettingValue<'LOG_LEVEL'>;
  /** json, pretty, or auto (pretty when stdout is a terminal). */
  readonly logFormat: SettingValue<'SIS_LOG_FORMAT'>;
  /** One successful request line in this many is logged (1: all, 0: none); answers of 400 and above always are. */
  readonly logSuccessSample: number;
  /** OpenTelemetry: where spans are sent over OTLP/HTTP (`/v1/traces` appended); null: no tracing, nothing loaded. */
  readonly otlpEndpoint: string | null;
  /** PostgreSQL pool size per process. */
  readonly databasePoolSize: number;
  /** PostgreSQL: longest a statement may run (0 = no limit); SQLite: longest wait for the write lock. Null: the store's default. */
  readonly databaseStatementTimeoutMs: number | null;
  /** PostgreSQL: longest wait for a connection, new or pooled. */
  readonly databaseConnectTimeoutMs: number;
  /** PostgreSQL: longest wait for a query or a transaction, measured here (0: none). */
  readonly databaseQueryTimeoutMs: number;
  /** PostgreSQL: calls waiting for a connection at once; more fail at once. */
  readonly databaseMaxWaiting: number;
  /** PostgreSQL: longest wait for a query of a `sis` command that is not bulk, measured here (0: none). */
  readonly commandQueryTimeoutMs: number;
  /** How long a `sis` command that writes tries again a database that is read-only or unavailable (0: not). */
  readonly commandRetryMs: number;
  /** Students read per page; a list longer than one page is streamed. 0: never stream. */
  readonly listPageRows: number;
  /** Bytes of answers kept for cacheable operations while the data is unchanged (0: none kept). */
  readonly answerCacheBytes: number;
  /** While the database does not answer, reads' last answers are served for at most this long after they were known current (0: off). */
  readonly staleIfErrorMs: number;
  /** Bytes of reads' last answers kept for that (0: none). */
  readonly staleAnswersBytes: number;
  /** A read with a stale answer is answered with it once its dependencies took this long (0: only when the database fails). */
  readonly staleAfterMs: number;
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
  /** Requests per client (clientKey) and window; null = unlimited. */
  readonly rateLimit: RateLimit | null;
  /**
   * Requests per native IPv6 client's /48 in rateLimit's window, beside the client's own
   * (SIS_RATE_LIMIT_IPV6_48); null: not counted (no rate limit, 0, or clients already counted by their /48).
   */
  readonly rateLimitIpv6Site: number | null;
  /** A native IPv6 client counts by this prefix (src/address/client-network.ts). */
  readonly clientIpv6Prefix: Ipv6Prefix;
  /** NAT64 prefixes configured beside the well-known one (SIS_CLIENT_NAT64_PREFIXES): their clients are IPv4 ones. */
  readonly clientNat64Prefixes: Nat64Prefixes;
  readonly redisUrl: string | null;
  /** Longest wait for a Redis command or connection; past it Redis is lost until a probe answers. */
  readonly redisTimeoutMs: number;
  /** PEM certificate and key: the server speaks HTTPS. */
  readonly tls: { readonly cert: Buffer; readonly key: Buffer } | null;
  /** documented: marks and push settings answer empty, as the spec shows them; extended: with their fields. */
  readonly results: ResultsMode;
  /** Most codes AuthCode accepts for one phone within an hour; 0: no limit. */
  readonly authCodesPerHour: number;
  /** AuthCode's protection of the SMS bill: number rules and velocity limits (docs/sms.md). */
  readonly sms: SmsRules;
  /** The SMS text (SIS_SMS_TEMPLATE); `{code}` stands for the code. */
  readonly smsMessage: string;
  /** The gateways AuthCode's messages leave by, in order, and their settings (docs/sms.md). */
  readonly smsGateways: SmsGatewaySettings;
  /** Where codes are delivered; null: messages wait in the outbox. */
  readonly smsWebhook: SmsWebhook | null;
  readonly outbox: OutboxSettings;
  readonly retention: RetentionSettings;
  readonly shadow: ShadowSettings;
}
