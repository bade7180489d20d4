/**
 * Every setting the service reads: its name, kind (bounds, choices or parser), default and meaning,
 * one entry each. The reader takes only these names (a typo does not compile) and parses each by
 * its entry; docs/operations.md, the config file's key check and the tests agree with this list.
 * Adding a setting: docs/architecture.md. Over 400 lines because it is that one table, an entry
 * per setting; split, it would no longer be the one list.
 */
import type { NumberType } from '../sms/number-types.js';
import { GUARD_LAYERS } from '../sms/refusal.js';
import type { RefusalReason } from '../sms/refusal.js';
import {
  DEFAULT_TEMPLATE,
  GATEWAY_NAMES,
  parseGateways,
  parseTemplate,
  senderId,
  smppUrl,
} from './gateway-settings.js';
import {
  basePath,
  bool,
  databaseUrl,
  fraction,
  httpUrl,
  int,
  isHostName,
  legacyUrl,
  oneOf,
  optionalInt,
  parsed,
  parseApiKeys,
  parseCidrList,
  parseIpv6Prefix,
  parseNat64Prefixes,
  parseRateLimit,
  parseSiteAllowance,
  parseShadowModes,
  parseWorkers,
  publicUrl,
  redisUrl,
  serviceList,
  text,
  textWhere,
} from './parse-settings.js';
import type { Kind } from './parse-settings.js';
import { MAX_RETENTION_MS } from './retention-settings.js';
import {
  defaultRegion,
  parseCountries,
  parseCountryLimits,
  parseEmbeddings,
  parseGuardModes,
  parseNetworks,
  parseRefuseTypes,
  parseTestNumbers,
  receiptPath,
} from './sms-guard-settings.js';

export interface SettingEntry<T = unknown> {
  readonly name: string;
  readonly kind: Kind<T>;
  /** The default as an operator would write it ("" = unset: the kind's `unset` value). */
  readonly default: string;
  readonly meaning: string;
}

/** The table, its names kept as literal types (the reader's key type is derived from them). */
function defineSettings<const S extends readonly SettingEntry[]>(settings: S): S {
  return settings;
}

const HOUR_MS = 3_600_000;
const GIB = 1024 * 1024 * 1024;

export const SETTINGS = defineSettings([
  {
    name: 'SIS_CONFIG_FILE',
    kind: text,
    default: '',
    meaning: 'JSON or .env-style file of settings; environment variables override it',
  },
  { name: 'PORT', kind: int(0, 65535), default: '8080', meaning: 'TCP port to listen on (0 = any free port)' },
  {
    name: 'HOST',
    kind: textWhere(isHostName, 'an IP address or a host name'),
    default: '0.0.0.0',
    meaning: 'address to listen on',
  },
  {
    name: 'SIS_NAMESPACE',
    kind: textWhere((v) => !/[\s"'<>&]/.test(v), 'a URI without spaces, quotes, <, > or &'),
    default: 'http://tempuri.org/',
    meaning: 'service namespace of elements and SOAPAction values',
  },
  {
    name: 'SIS_DATABASE_URL',
    kind: databaseUrl,
    default: 'sqlite:./data/sis.db',
    meaning: 'database: sqlite:PATH or postgres://…',
  },
  { name: 'SIS_DATABASE_POOL_SIZE', kind: int(1, 1000), default: '10', meaning: 'PostgreSQL connections per process' },
  {
    name: 'SIS_DATABASE_STATEMENT_TIMEOUT_MS',
    kind: optionalInt(0, 86_400_000),
    default: '',
    meaning: 'PostgreSQL: longest statement (0 = no limit); SQLite: longest wait for the write lock (default 5000)',
  },
  {
    name: 'SIS_DATABASE_CONNECT_TIMEOUT_MS',
    kind: int(100, 600_000),
    default: '2000',
    meaning: 'PostgreSQL: longest wait for a connection, a new one or a free one of the pool',
  },
  {
    name: 'SIS_DATABASE_QUERY_TIMEOUT_MS',
    kind: int(0, 600_000),
    default: '3000',
    meaning:
      'PostgreSQL: longest wait for a query, and a transaction from begin to commit, measured here; past it the connection is dropped and calls fail at once until a probe finds the database back (0 = none)',
  },
  {
    name: 'SIS_DATABASE_MAX_WAITING',
    kind: int(1, 1_000_000),
    default: '100',
    meaning: 'PostgreSQL: calls of one process waiting for a connection at once; more get the server fault at once',
  },
  {
    name: 'SIS_COMMAND_QUERY_TIMEOUT_MS',
    kind: int(0, 86_400_000),
    default: '30000',
    meaning:
      'PostgreSQL: the sis commands (but import, export and students): longest wait for a query, measured here; past it the command ends with one line instead of waiting out a partition (0 = none)',
  },
  {
    name: 'SIS_COMMAND_RETRY_MS',
    kind: int(0, 3_600_000),
    default: '60000',
    meaning:
      'the sis commands that write: how long a database that refuses writes (read-only: a standby after a switchover) or does not answer is tried again, each time on new connections, before the command ends with its line (0 = not tried again)',
  },
  {
    name: 'SIS_ANSWER_CACHE_BYTES',
    kind: int(0, GIB),
    default: '16777216',
    meaning:
      'bytes of GetStudentSchool answers kept while the data version (read before the data on every request) is unchanged (0 = none)',
  },
  {
    name: 'SIS_STALE_IF_ERROR_MS',
    kind: int(0, 86_400_000),
    default: '300000',
    meaning:
      'while the database does not answer, reads are answered as this instance last answered them, for at most this long after that answer was known current (0 = off)',
  },
  {
    name: 'SIS_STALE_ANSWERS_BYTES',
    kind: int(0, GIB),
    default: '16777216',
    meaning: "bytes of reads' last answers kept for SIS_STALE_IF_ERROR_MS, the most recently asked first (0 = none)",
  },
  {
    name: 'SIS_STALE_AFTER_MS',
    kind: int(0, 60_000),
    default: '250',
    meaning:
      'a read with a stale answer waits this long for its dependencies (the rate limit, the database), then is answered with it while its query goes on; the rate limit waits no longer for Redis (0 = wait for their deadlines)',
  },
  {
    name: 'SIS_LIST_PAGE_ROWS',
    kind: int(0, 1_000_000),
    default: '1000',
    meaning: 'students read per page; a longer list is streamed (chunked) from one snapshot (0 = never stream)',
  },
  { name: 'SIS_BASE_PATH', kind: basePath, default: '/', meaning: 'path the .asmx files are mounted under' },
  { name: 'SIS_PUBLIC_URL', kind: publicUrl, default: '', meaning: 'public base URL used in WSDL and disco addresses' },
  {
    name: 'SIS_TRUSTED_PROXIES',
    kind: parsed(parseCidrList, []),
    default: '',
    meaning: 'proxy addresses or CIDR blocks whose X-Forwarded-* headers are believed',
  },
  { name: 'SIS_MAX_BODY_BYTES', kind: int(1024, GIB), default: '4194304', meaning: 'largest request body' },
  {
    name: 'SIS_MAX_XML_DEPTH',
    kind: int(4, 10_000),
    default: '64',
    meaning: 'deepest element nesting in a SOAP request',
  },
  {
    name: 'SIS_MAX_FORM_FIELDS',
    kind: int(1, 1_000_000),
    default: '1000',
    meaning: 'most fields in a query string or form',
  },
  {
    name: 'SIS_REQUEST_TIMEOUT_MS',
    kind: int(100, HOUR_MS),
    default: '30000',
    meaning: 'time allowed to receive a whole request',
  },
  {
    name: 'SIS_HEADERS_TIMEOUT_MS',
    kind: int(100, HOUR_MS),
    default: '10000',
    meaning: 'time allowed to receive the request headers',
  },
  {
    name: 'SIS_KEEP_ALIVE_TIMEOUT_MS',
    kind: int(0, HOUR_MS),
    default: '5000',
    meaning: 'idle keep-alive connections are closed after this',
  },
  {
    name: 'SIS_DEMO_DATA',
    kind: bool,
    default: 'true',
    meaning: 'load demo data on the first start of an empty database',
  },
  {
    name: 'SIS_HELP_TEST_FORM',
    kind: oneOf(['local', 'all', 'off']),
    default: 'local',
    meaning: 'help page test form for: local, all or off',
  },
  {
    name: 'LOG_LEVEL',
    kind: oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
    default: 'info',
    meaning: 'fatal, error, warn, info, debug, trace or silent',
  },
  {
    name: 'SIS_LOG_FORMAT',
    kind: oneOf(['auto', 'json', 'pretty']),
    default: 'auto',
    meaning: 'json, pretty, or auto (pretty when stdout is a terminal)',
  },
  {
    name: 'SIS_LOG_SUCCESS_SAMPLE',
    kind: int(0, 1_000_000),
    default: '1',
    meaning:
      'log one successful request line in N (1 = every one, 0 = none); answers of 400 and above are always logged',
  },
  {
    name: 'OTEL_EXPORTER_OTLP_ENDPOINT',
    kind: httpUrl,
    default: '',
    meaning: 'OpenTelemetry collector (http://host:4318): a span per request sent over OTLP/HTTP; unset = no tracing',
  },
  {
    name: 'SIS_SHUTDOWN_GRACE_MS',
    kind: int(0, HOUR_MS),
    default: '5000',
    meaning: 'on SIGTERM, how long idle keep-alive connections stay open',
  },
  {
    name: 'SIS_SHUTDOWN_TIMEOUT_MS',
    kind: int(100, HOUR_MS),
    default: '30000',
    meaning: 'on SIGTERM, longest wait for requests to finish',
  },
  {
    name: 'SIS_WORKERS',
    kind: parsed(parseWorkers, 1),
    default: '1',
    meaning: 'worker processes: a number or auto (one per core); --workers wins',
  },
  { name: 'SIS_DEBUG_HEADERS', kind: bool, default: 'false', meaning: 'add X-Sis-Worker-Pid to every answer' },
  {
    name: 'SIS_API_KEYS',
    kind: parsed(parseApiKeys, [], () => null),
    default: '',
    meaning: 'hashed API keys (sha256:HEX,…); set = a key is required',
  },
  {
    name: 'SIS_API_KEY_SERVICES',
    kind: serviceList,
    default: '*',
    meaning: 'service files that require a key (* = all)',
  },
  {
    name: 'SIS_AUTH_REALM',
    kind: textWhere((v) => !/["\\\r\n]/.test(v), 'text without quotes, backslashes or line breaks'),
    default: 'Student Information',
    meaning: 'realm named in WWW-Authenticate',
  },
  {
    name: 'SIS_ALLOW_FROM',
    kind: parsed(parseCidrList, []),
    default: '',
    meaning: 'client address allow-list (CIDR, IPv4/IPv6); set = others get 403',
  },
  {
    name: 'SIS_ALLOW_FROM_SERVICES',
    kind: serviceList,
    default: '*',
    meaning: 'service files the allow-list applies to (* = all)',
  },
  {
    name: 'SIS_RATE_LIMIT',
    kind: parsed(parseRateLimit, null),
    default: '',
    meaning: 'requests per client address and window, e.g. 100/1s, 6000/1m',
  },
  {
    name: 'SIS_RATE_LIMIT_IPV6_48',
    kind: parsed(parseSiteAllowance, { times: 16 }),
    default: '16x',
    meaning:
      'requests per IPv6 /48 in SIS_RATE_LIMIT’s window, beside its per-client limit: Nx (N times its count) or a number (0 = not counted)',
  },
  {
    name: 'SIS_CLIENT_IPV6_PREFIX',
    kind: parsed(parseIpv6Prefix, 64),
    default: '64',
    meaning:
      'a native IPv6 client is counted by this prefix (the rate limit, the access log, AuthCode’s address limit): 64 (a subscriber), 56 or 48 (a site)',
  },
  {
    name: 'SIS_CLIENT_NAT64_PREFIXES',
    kind: parsed(parseNat64Prefixes, []),
    default: '',
    meaning:
      'NAT64 prefixes in front of clients besides the well-known 64:ff9b::/96, each with its RFC 6052 length (e.g. 64:ff9b:1::/48): a client behind one counts as the IPv4 address it embeds',
  },
  {
    name: 'SIS_REDIS_URL',
    kind: redisUrl,
    default: '',
    meaning: 'Redis shared by instances for rate limits (redis://…)',
  },
  {
    name: 'SIS_REDIS_TIMEOUT_MS',
    kind: int(10, 60_000),
    default: '500',
    meaning: 'longest wait for a Redis command or connection; past it Redis is lost until a probe answers',
  },
  { name: 'SIS_TLS_CERT', kind: text, default: '', meaning: 'PEM certificate (chain) file: serve HTTPS' },
  { name: 'SIS_TLS_KEY', kind: text, default: '', meaning: 'PEM private key file for SIS_TLS_CERT' },
  {
    name: 'SIS_RESULTS',
    kind: oneOf(['documented', 'extended']),
    default: 'documented',
    meaning: 'documented (marks and push settings empty, as the spec) or extended',
  },
  {
    name: 'SIS_AUTH_CODES_PER_HOUR',
    kind: int(0, 1_000_000),
    default: '5',
    meaning: 'most codes AuthCode accepts per phone within an hour (0 = no limit)',
  },
  {
    name: 'SIS_AUTH_CODE_BACKOFF',
    kind: bool,
    default: 'on',
    meaning:
      'after a phone reached its hourly limit, each next code waits longer since the last (1 min doubling to 32 min, with jitter)',
  },
  {
    name: 'SIS_AUTH_CODES_PER_ADDRESS_HOUR',
    kind: int(0, 1_000_000),
    default: '1000',
    meaning:
      'most codes accepted per client address (behind SIS_TRUSTED_PROXIES, the forwarded one; IPv6: per SIS_CLIENT_IPV6_PREFIX) per clock hour; high because carriers and schools put many people behind one address (0 = no limit)',
  },
  {
    name: 'SIS_SMS_IPV6_PREFIX',
    kind: parsed(parseIpv6Prefix, null),
    default: '',
    meaning: 'the old name of SIS_CLIENT_IPV6_PREFIX, read when that is not set',
  },
  {
    name: 'SIS_AUTH_CODES_PER_IPV6_48_HOUR',
    kind: int(0, 1_000_000),
    default: '5000',
    meaning:
      'most codes accepted per IPv6 /48 per clock hour, beside the per-prefix limit: a tunnel broker hands one client a /48, 65,536 /64s (0 = no limit)',
  },
  {
    name: 'SIS_SMS_TRUSTED_ADDRESSES',
    kind: parsed(parseNetworks, []),
    default: '',
    meaning: "addresses and CIDR ranges the address limit does not count (the school's own network, a back office)",
  },
  {
    name: 'SIS_SMS_TRUSTED_EMBEDDED',
    kind: parsed(parseEmbeddings, new Set()),
    default: '',
    meaning:
      'IPv6 forms that carry a trusted IPv4 address and are trusted as it (translated, compatible, 6to4, nat64, teredo); IPv4-mapped always',
  },
  {
    name: 'SIS_AUTH_CODES_PER_RANGE_HOUR',
    kind: int(0, 1_000_000),
    default: '20',
    meaning:
      'most codes accepted per number range (the number without its last four digits) per clock hour (0 = no limit)',
  },
  {
    name: 'SIS_SMS_DEFAULT_REGION',
    kind: defaultRegion,
    default: '',
    meaning:
      'ISO 3166 country (e.g. SA) of numbers written without a country code; unset = such numbers are not understood',
  },
  {
    name: 'SIS_SMS_REFUSE_TYPES',
    kind: parsed(parseRefuseTypes, { invalid: false, types: new Set<NumberType>() }),
    default: 'invalid,premium-rate,shared-cost,toll-free,uan,voicemail,pager',
    meaning:
      'numbers AuthCode refuses: invalid, and number types (also voip, personal-number, fixed-line…); none = no check',
  },
  {
    name: 'SIS_SMS_COUNTRIES',
    kind: parsed(parseCountries, null),
    default: '',
    meaning: 'ISO 3166 countries codes may be sent to (e.g. SA,AE); unset = every country',
  },
  {
    name: 'SIS_SMS_COUNTRY_DAILY_LIMITS',
    kind: parsed(parseCountryLimits, null),
    default: 'home=20000,*=200',
    meaning:
      "most codes per country per UTC day, COUNTRY=N pairs; home = SIS_SMS_DEFAULT_REGION's country, * = every other; none = no limit",
  },
  {
    name: 'SIS_SMS_HOURLY_BUDGET',
    kind: int(0, 1_000_000_000),
    default: '',
    meaning: 'most codes accepted per clock hour in all (every instance); unset or 0 = no budget',
  },
  {
    name: 'SIS_SMS_DAILY_BUDGET',
    kind: int(0, 1_000_000_000),
    default: '',
    meaning: 'most codes accepted per UTC day in all (every instance); unset or 0 = no budget',
  },
  {
    name: 'SIS_SMS_TEST_NUMBERS',
    kind: parsed(parseTestNumbers, new Set<string>()),
    default: '',
    meaning:
      'phones whose codes are recorded as test codes, never sent and never counted (app-store review, load tests)',
  },
  {
    name: 'SIS_SMS_TEST_CODES_PER_HOUR',
    kind: int(0, 1_000_000),
    default: '60',
    meaning: 'most codes per test number per clock hour (0 = no limit, for a load test)',
  },
  {
    name: 'SIS_AUTH_CODE_REPEAT_MS',
    // At most the hour the phone's codes are read over (the repeat is found among them).
    kind: int(0, HOUR_MS),
    default: '300000',
    meaning:
      'the same code for the same phone again within this time is accepted without a second SMS or count (0 = off; at most an hour)',
  },
  {
    name: 'SIS_SMS_GUARD',
    kind: parsed(parseGuardModes, new Set<RefusalReason>()),
    default: 'enforce',
    meaning: `enforce or monitor (would-be refusals counted and logged, nothing refused; number, blocked-range and budget stay enforced unless named), then layer=enforce|monitor (${[...GUARD_LAYERS.keys()].join(', ')})`,
  },
  {
    name: 'SIS_SMS_RECEIPT_PATH',
    kind: receiptPath,
    default: '',
    meaning:
      'path (e.g. /sms/receipts) where the gateway POSTs delivery receipts, signed like the webhook; unset = no receipts',
  },
  {
    name: 'SIS_SMS_RECEIPT_SECRET',
    kind: text,
    default: '',
    meaning:
      "HMAC-SHA256 key of the receipts' X-Signature-256, at least 32 bytes; unset = the webhook's secret (a fallback)",
  },
  {
    name: 'SIS_SMS_GATEWAY',
    kind: parsed(parseGateways, ['webhook']),
    default: 'webhook',
    meaning: `where codes go: ${GATEWAY_NAMES.join(', ')}; several (unifonic,twilio) are tried in order while one refuses or fails`,
  },
  {
    name: 'SIS_SMS_TEMPLATE',
    kind: parsed(parseTemplate, DEFAULT_TEMPLATE),
    default: DEFAULT_TEMPLATE,
    meaning: 'SMS text; {code} is replaced by the code (no other placeholder); one segment where it can',
  },
  {
    name: 'SIS_SMS_MESSAGE',
    kind: parsed<string | null>(parseTemplate, null),
    default: '',
    meaning: 'former name of SIS_SMS_TEMPLATE, read when set (not both)',
  },
  {
    name: 'SIS_SMS_SENDER_ID',
    kind: senderId,
    default: '',
    meaning:
      "the sender shown on the phone (alphanumeric, at most 11, or a number; registered with the provider); unset = the provider's default",
  },
  {
    name: 'SIS_SMS_CALLBACK_URL',
    kind: httpUrl,
    default: '',
    meaning:
      "SIS_SMS_RECEIPT_PATH's public URL as providers reach it; delivery reports are asked of kannel, twilio and vonage at <it>/<gateway>",
  },
  {
    name: 'SIS_SMS_WEBHOOK_URL',
    kind: text,
    default: '',
    meaning: 'SMS gateway webhook (http/https); unset = messages wait in the outbox',
  },
  {
    name: 'SIS_SMS_WEBHOOK_SECRET',
    kind: text,
    default: '',
    meaning: 'HMAC-SHA256 key of X-Signature-256, at least 32 bytes; required with the URL',
  },
  {
    name: 'SIS_SMS_WEBHOOK_TIMEOUT_MS',
    kind: int(100, 300_000),
    default: '10000',
    meaning: "longest wait for a gateway's answer per attempt (every gateway, not only the webhook)",
  },
  {
    name: 'SIS_SMS_KANNEL_URL',
    kind: text,
    default: '',
    meaning: "Kannel smsbox's sendsms URL (http://host:13013/cgi-bin/sendsms)",
  },
  { name: 'SIS_SMS_KANNEL_USER', kind: text, default: '', meaning: "Kannel's sendsms-user username" },
  {
    name: 'SIS_SMS_KANNEL_PASSWORD',
    kind: text,
    default: '',
    meaning: "Kannel's sendsms-user password (also keys the delivery reports' token: then at least 32 bytes)",
  },
  {
    name: 'SIS_SMS_KANNEL_SMSC',
    kind: text,
    default: '',
    meaning: "Kannel smsc-id to route through; unset = Kannel's routing",
  },
  { name: 'SIS_SMS_SMPP_URL', kind: smppUrl, default: '', meaning: 'the SMSC: smpp://host:port (ssmpp:// for TLS)' },
  { name: 'SIS_SMS_SMPP_SYSTEM_ID', kind: text, default: '', meaning: 'SMPP system_id the carrier gave' },
  { name: 'SIS_SMS_SMPP_PASSWORD', kind: text, default: '', meaning: 'SMPP password the carrier gave' },
  {
    name: 'SIS_SMS_SMPP_BIND',
    kind: oneOf(['transceiver', 'transmitter']),
    default: 'transceiver',
    meaning: 'transceiver (receipts come back on the same bind) or transmitter (no receipts)',
  },
  {
    name: 'SIS_SMS_SMPP_WINDOW',
    kind: int(1, 100),
    default: '10',
    meaning: 'submit_sm sent and not yet answered, at most, per process',
  },
  { name: 'SIS_SMS_TWILIO_ACCOUNT_SID', kind: text, default: '', meaning: 'Twilio Account SID (AC…)' },
  {
    name: 'SIS_SMS_TWILIO_AUTH_TOKEN',
    kind: text,
    default: '',
    meaning: "Twilio Auth Token: the API's password and the key of X-Twilio-Signature (32 bytes, as Twilio's are)",
  },
  {
    name: 'SIS_SMS_TWILIO_API_URL',
    kind: publicUrl,
    default: 'https://api.twilio.com',
    meaning: "Twilio's API base URL",
  },
  { name: 'SIS_SMS_VONAGE_API_KEY', kind: text, default: '', meaning: 'Vonage API key' },
  { name: 'SIS_SMS_VONAGE_API_SECRET', kind: text, default: '', meaning: 'Vonage API secret' },
  {
    name: 'SIS_SMS_VONAGE_SIGNATURE_SECRET',
    kind: text,
    default: '',
    meaning:
      "Vonage signature secret: checks the delivery receipts' sig, at least 32 bytes; unset = Vonage's receipts refused",
  },
  {
    name: 'SIS_SMS_VONAGE_SIGNATURE_METHOD',
    kind: oneOf(['md5hash', 'md5', 'sha1', 'sha256', 'sha512']),
    default: 'md5hash',
    meaning: "the signature method chosen in Vonage's dashboard (md5hash is its default)",
  },
  {
    name: 'SIS_SMS_VONAGE_API_URL',
    kind: publicUrl,
    default: 'https://rest.nexmo.com',
    meaning: "Vonage's SMS API base URL",
  },
  { name: 'SIS_SMS_UNIFONIC_APP_SID', kind: text, default: '', meaning: 'Unifonic AppSid' },
  {
    name: 'SIS_SMS_UNIFONIC_WEBHOOK_TOKEN',
    kind: text,
    default: '',
    meaning:
      "the token the DLR webhook URL given to Unifonic carries (?token=), at least 32 bytes; unset = Unifonic's receipts refused",
  },
  {
    name: 'SIS_SMS_UNIFONIC_API_URL',
    kind: publicUrl,
    default: 'https://el.cloud.unifonic.com',
    meaning: "Unifonic's API base URL",
  },
  {
    name: 'SIS_OUTBOX_POLL_MS',
    kind: int(10, HOUR_MS),
    default: '1000',
    meaning: 'how often the outbox worker looks for due messages',
  },
  {
    name: 'SIS_OUTBOX_MAX_ATTEMPTS',
    kind: int(1, 100),
    default: '8',
    meaning: 'delivery attempts before a message is marked failed',
  },
  {
    name: 'SIS_OUTBOX_BACKOFF_MS',
    kind: int(1, HOUR_MS),
    default: '1000',
    meaning: 'delay before the 2nd attempt, doubled for each next one (at most 5 min)',
  },
  {
    name: 'SIS_OUTBOX_LEASE_MS',
    kind: int(1000, HOUR_MS),
    default: '30000',
    meaning: 'how long a claimed message is reserved for its worker',
  },
  {
    name: 'SIS_AUTH_CODE_RETENTION_MS',
    kind: int(0, MAX_RETENTION_MS),
    default: '2592000000',
    meaning: 'how long accepted codes are kept (30 days; 0 = forever; at least an hour while the hourly limit is on)',
  },
  {
    name: 'SIS_OUTBOX_RETENTION_MS',
    kind: int(0, MAX_RETENTION_MS),
    default: '2592000000',
    meaning: 'how long delivered and failed messages are kept (30 days; 0 = forever; pending ones always are)',
  },
  {
    name: 'SIS_LEGACY_URL',
    kind: legacyUrl,
    default: '',
    meaning: 'the legacy service beside this one (http/https base URL; our path under SIS_BASE_PATH is appended)',
  },
  {
    name: 'SIS_SHADOW',
    kind: parsed(parseShadowModes, { default: 'off', overrides: [] }),
    default: 'off',
    meaning:
      'off; compare (we answer, the legacy gets a copy); legacy (the legacy answers, ours is computed and compared); then NAME=MODE overrides per operation or service file',
  },
  {
    name: 'SIS_SHADOW_ROUTE_FROM',
    kind: parsed(parseCidrList, []),
    default: '',
    meaning: 'addresses or CIDR blocks whose X-Shadow-Route header (ours or legacy) routes their own request',
  },
  { name: 'SIS_SHADOW_SAMPLE', kind: fraction, default: '1', meaning: 'fraction of requests compared (0 to 1)' },
  {
    name: 'SIS_SHADOW_TIMEOUT_MS',
    kind: int(10, 600_000),
    default: '5000',
    meaning: 'longest wait for the legacy service’s whole answer',
  },
  {
    name: 'SIS_SHADOW_MAX_IN_FLIGHT',
    kind: int(1, 100_000),
    default: '64',
    meaning: 'comparisons in progress per process; beyond it a request is counted skipped',
  },
  {
    name: 'SIS_SHADOW_MAX_ANSWER_BYTES',
    kind: int(1024, GIB),
    default: '16777216',
    meaning: 'largest legacy (or our) answer compared; a larger legacy answer is legacy-failed',
  },
  {
    name: 'SIS_SHADOW_FALLBACK',
    kind: bool,
    default: 'on',
    meaning: 'legacy mode: when the legacy cannot be reached, we answer (on) or the client gets 502 (off)',
  },
  {
    name: 'SIS_SHADOW_KEEP',
    kind: int(0, 10_000_000),
    default: '1000',
    meaning: 'most differences kept as examples (at most 20 per operation, binding and kind)',
  },
  {
    name: 'SIS_SHADOW_RETENTION_MS',
    kind: int(0, MAX_RETENTION_MS),
    default: '604800000',
    meaning: 'how long shadow examples and counts are kept (7 days; AuthCode phones and codes masked)',
  },
  {
    name: 'SIS_SHADOW_RECHECK',
    kind: bool,
    default: 'on',
    meaning: 'a read compared different is asked of the legacy once more: noisy where the legacy moves',
  },
  {
    name: 'SIS_SHADOW_LIST_ORDER',
    kind: oneOf(['report', 'ignore']),
    default: 'report',
    meaning: 'the same list items in another order: an order difference (report) or nothing (ignore)',
  },
]);

export type SettingName = (typeof SETTINGS)[number]['name'];

/** The value a setting reads as, derived from its entry's kind. */
export type SettingValue<N extends SettingName> =
  Extract<(typeof SETTINGS)[number], { readonly name: N }>['kind'] extends Kind<infer T> ? T : never;

export const SETTING_NAMES: ReadonlySet<string> = new Set(SETTINGS.map((s) => s.name));
