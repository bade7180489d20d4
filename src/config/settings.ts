/**
 * Every setting the service reads, with its default and meaning: the one list that
 * docs/operations.md, the config file's key check and the tests agree on.
 */
export interface SettingInfo {
  readonly name: string;
  /** The default as an operator would write it ("" = unset). */
  readonly default: string;
  readonly meaning: string;
}

export const SETTINGS: readonly SettingInfo[] = [
  {
    name: 'SIS_CONFIG_FILE',
    default: '',
    meaning: 'JSON or .env-style file of settings; environment variables override it',
  },
  { name: 'PORT', default: '8080', meaning: 'TCP port to listen on (0 = any free port)' },
  { name: 'HOST', default: '0.0.0.0', meaning: 'address to listen on' },
  {
    name: 'SIS_NAMESPACE',
    default: 'http://tempuri.org/',
    meaning: 'service namespace of elements and SOAPAction values',
  },
  { name: 'SIS_DATABASE_URL', default: 'sqlite:./data/sis.db', meaning: 'database: sqlite:PATH or postgres://…' },
  { name: 'SIS_DATABASE_POOL_SIZE', default: '10', meaning: 'PostgreSQL connections per process' },
  {
    name: 'SIS_DATABASE_STATEMENT_TIMEOUT_MS',
    default: '',
    meaning: 'PostgreSQL: longest statement (0 = no limit); SQLite: longest wait for the write lock (default 5000)',
  },
  {
    name: 'SIS_ANSWER_CACHE_BYTES',
    default: '16777216',
    meaning:
      'bytes of GetStudentSchool answers kept while the data version (read before the data on every request) is unchanged (0 = none)',
  },
  {
    name: 'SIS_LIST_PAGE_ROWS',
    default: '1000',
    meaning: 'students read per page; a longer list is streamed (chunked) from one snapshot (0 = never stream)',
  },
  { name: 'SIS_BASE_PATH', default: '/', meaning: 'path the .asmx files are mounted under' },
  { name: 'SIS_PUBLIC_URL', default: '', meaning: 'public base URL used in WSDL and disco addresses' },
  { name: 'SIS_TRUSTED_PROXIES', default: '', meaning: 'proxy addresses whose X-Forwarded-* headers are believed' },
  { name: 'SIS_MAX_BODY_BYTES', default: '4194304', meaning: 'largest request body' },
  { name: 'SIS_MAX_XML_DEPTH', default: '64', meaning: 'deepest element nesting in a SOAP request' },
  { name: 'SIS_MAX_FORM_FIELDS', default: '1000', meaning: 'most fields in a query string or form' },
  { name: 'SIS_REQUEST_TIMEOUT_MS', default: '30000', meaning: 'time allowed to receive a whole request' },
  { name: 'SIS_HEADERS_TIMEOUT_MS', default: '10000', meaning: 'time allowed to receive the request headers' },
  { name: 'SIS_KEEP_ALIVE_TIMEOUT_MS', default: '5000', meaning: 'idle keep-alive connections are closed after this' },
  { name: 'SIS_DEMO_DATA', default: 'true', meaning: 'load demo data on the first start of an empty database' },
  { name: 'SIS_HELP_TEST_FORM', default: 'local', meaning: 'help page test form for: local, all or off' },
  { name: 'LOG_LEVEL', default: 'info', meaning: 'fatal, error, warn, info, debug, trace or silent' },
  { name: 'SIS_LOG_FORMAT', default: 'auto', meaning: 'json, pretty, or auto (pretty when stdout is a terminal)' },
  {
    name: 'SIS_LOG_SUCCESS_SAMPLE',
    default: '1',
    meaning:
      'log one successful request line in N (1 = every one, 0 = none); answers of 400 and above are always logged',
  },
  {
    name: 'OTEL_EXPORTER_OTLP_ENDPOINT',
    default: '',
    meaning: 'OpenTelemetry collector (http://host:4318): a span per request sent over OTLP/HTTP; unset = no tracing',
  },
  {
    name: 'SIS_SHUTDOWN_GRACE_MS',
    default: '5000',
    meaning: 'on SIGTERM, how long idle keep-alive connections stay open',
  },
  { name: 'SIS_SHUTDOWN_TIMEOUT_MS', default: '30000', meaning: 'on SIGTERM, longest wait for requests to finish' },
  { name: 'SIS_WORKERS', default: '1', meaning: 'worker processes: a number or auto (one per core); --workers wins' },
  { name: 'SIS_DEBUG_HEADERS', default: 'false', meaning: 'add X-Sis-Worker-Pid to every answer' },
  { name: 'SIS_API_KEYS', default: '', meaning: 'hashed API keys (sha256:HEX,…); set = a key is required' },
  { name: 'SIS_API_KEY_SERVICES', default: '*', meaning: 'service files that require a key (* = all)' },
  { name: 'SIS_AUTH_REALM', default: 'Student Information', meaning: 'realm named in WWW-Authenticate' },
  { name: 'SIS_ALLOW_FROM', default: '', meaning: 'client address allow-list (CIDR, IPv4/IPv6); set = others get 403' },
  { name: 'SIS_ALLOW_FROM_SERVICES', default: '*', meaning: 'service files the allow-list applies to (* = all)' },
  { name: 'SIS_RATE_LIMIT', default: '', meaning: 'requests per client address and window, e.g. 100/1s, 6000/1m' },
  { name: 'SIS_REDIS_URL', default: '', meaning: 'Redis shared by instances for rate limits (redis://…)' },
  { name: 'SIS_TLS_CERT', default: '', meaning: 'PEM certificate (chain) file: serve HTTPS' },
  { name: 'SIS_TLS_KEY', default: '', meaning: 'PEM private key file for SIS_TLS_CERT' },
  {
    name: 'SIS_RESULTS',
    default: 'documented',
    meaning: 'documented (marks and push settings empty, as the spec) or extended',
  },
  {
    name: 'SIS_AUTH_CODES_PER_HOUR',
    default: '5',
    meaning: 'most codes AuthCode accepts per phone within an hour (0 = no limit)',
  },
  {
    name: 'SIS_AUTH_CODE_BACKOFF',
    default: 'on',
    meaning:
      'after a phone reached its hourly limit, each next code waits longer since the last (1 min doubling to 32 min, with jitter)',
  },
  {
    name: 'SIS_AUTH_CODES_PER_ADDRESS_HOUR',
    default: '30',
    meaning:
      'most codes accepted per client address (behind SIS_TRUSTED_PROXIES, the forwarded one) per clock hour (0 = no limit)',
  },
  {
    name: 'SIS_AUTH_CODES_PER_RANGE_HOUR',
    default: '20',
    meaning:
      'most codes accepted per number range (the number without its last four digits) per clock hour (0 = no limit)',
  },
  {
    name: 'SIS_SMS_DEFAULT_REGION',
    default: '',
    meaning:
      'ISO 3166 country (e.g. SA) of numbers written without a country code; unset = such numbers are not understood',
  },
  {
    name: 'SIS_SMS_REFUSE_TYPES',
    default: 'invalid,premium-rate,shared-cost,toll-free,uan,voicemail,pager',
    meaning:
      'numbers AuthCode refuses: invalid, and number types (also voip, personal-number, fixed-line…); none = no check',
  },
  {
    name: 'SIS_SMS_COUNTRIES',
    default: '',
    meaning: 'ISO 3166 countries codes may be sent to (e.g. SA,AE); unset = every country',
  },
  {
    name: 'SIS_SMS_COUNTRY_DAILY_LIMITS',
    default: 'SA=20000,*=200',
    meaning: 'most codes per country per UTC day, COUNTRY=N pairs; * = every other country; none = no limit',
  },
  {
    name: 'SIS_SMS_HOURLY_BUDGET',
    default: '',
    meaning: 'most codes accepted per clock hour in all (every instance); unset or 0 = no budget',
  },
  {
    name: 'SIS_SMS_DAILY_BUDGET',
    default: '',
    meaning: 'most codes accepted per UTC day in all (every instance); unset or 0 = no budget',
  },
  {
    name: 'SIS_SMS_MESSAGE',
    default: 'Your verification code is {code}',
    meaning: 'SMS text; {code} is replaced by the code',
  },
  {
    name: 'SIS_SMS_WEBHOOK_URL',
    default: '',
    meaning: 'SMS gateway webhook (http/https); unset = messages wait in the outbox',
  },
  { name: 'SIS_SMS_WEBHOOK_SECRET', default: '', meaning: 'HMAC-SHA256 key of X-Signature-256; required with the URL' },
  { name: 'SIS_SMS_WEBHOOK_TIMEOUT_MS', default: '10000', meaning: 'longest wait for the gateway per attempt' },
  { name: 'SIS_OUTBOX_POLL_MS', default: '1000', meaning: 'how often the outbox worker looks for due messages' },
  { name: 'SIS_OUTBOX_MAX_ATTEMPTS', default: '8', meaning: 'delivery attempts before a message is marked failed' },
  {
    name: 'SIS_OUTBOX_BACKOFF_MS',
    default: '1000',
    meaning: 'delay before the 2nd attempt, doubled for each next one (at most 5 min)',
  },
  { name: 'SIS_OUTBOX_LEASE_MS', default: '30000', meaning: 'how long a claimed message is reserved for its worker' },
  {
    name: 'SIS_AUTH_CODE_RETENTION_MS',
    default: '2592000000',
    meaning: 'how long accepted codes are kept (30 days; 0 = forever; at least an hour while the hourly limit is on)',
  },
  {
    name: 'SIS_OUTBOX_RETENTION_MS',
    default: '2592000000',
    meaning: 'how long delivered and failed messages are kept (30 days; 0 = forever; pending ones always are)',
  },
  {
    name: 'SIS_LEGACY_URL',
    default: '',
    meaning: 'the legacy service beside this one (http/https base URL; our path under SIS_BASE_PATH is appended)',
  },
  {
    name: 'SIS_SHADOW',
    default: 'off',
    meaning:
      'off; compare (we answer, the legacy gets a copy); legacy (the legacy answers, ours is computed and compared)',
  },
  { name: 'SIS_SHADOW_SAMPLE', default: '1', meaning: 'fraction of requests compared (0 to 1)' },
  { name: 'SIS_SHADOW_TIMEOUT_MS', default: '5000', meaning: 'longest wait for the legacy service’s whole answer' },
  {
    name: 'SIS_SHADOW_MAX_IN_FLIGHT',
    default: '64',
    meaning: 'comparisons in progress per process; beyond it a request is counted skipped',
  },
  {
    name: 'SIS_SHADOW_MAX_ANSWER_BYTES',
    default: '16777216',
    meaning: 'largest legacy (or our) answer compared; a larger legacy answer is legacy-failed',
  },
  {
    name: 'SIS_SHADOW_FALLBACK',
    default: 'on',
    meaning: 'legacy mode: when the legacy cannot be reached, we answer (on) or the client gets 502 (off)',
  },
  {
    name: 'SIS_SHADOW_KEEP',
    default: '1000',
    meaning: 'most differences kept as examples (at most 20 per operation, binding and kind)',
  },
  {
    name: 'SIS_SHADOW_RETENTION_MS',
    default: '604800000',
    meaning: 'how long shadow examples and counts are kept (7 days; AuthCode phones and codes masked)',
  },
];

export const SETTING_NAMES: ReadonlySet<string> = new Set(SETTINGS.map((s) => s.name));
