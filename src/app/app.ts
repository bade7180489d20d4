import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import { Gate } from '../access/gate.js';
import { REQUEST_LIMITS } from '../access/rate-limit.js';
import { createRateLimiter } from '../access/rate-limiter-factory.js';
import { Dispatcher } from '../bindings/dispatch.js';
import { MetadataEndpoint } from '../bindings/metadata-endpoint.js';
import { authCodePolicyOf } from '../config/config.js';
import type { Config } from '../config/config.js';
import { groupServices } from '../contract/define.js';
import { Drainer } from '../http/drain.js';
import { createReportBrake } from '../http/report-brake.js';
import { createHttpServer } from '../http/server.js';
import type { ServerState } from '../http/server.js';
import type { Logger } from '../logging/logger.js';
import { countedStore } from '../observe/counted-store.js';
import {
  noteDatabaseFailure,
  noteDatabaseWritable,
  tellClockDifference,
  watchDatabase,
} from '../observe/database-watch.js';
import { DependencyHealth } from '../observe/dependency-health.js';
import type { Problem } from '../observe/dependency-health.js';
import { createMetrics } from '../observe/metrics.js';
import { OpsEndpoints } from '../observe/ops-endpoints.js';
import type { MetricsText } from '../observe/ops-endpoints.js';
import { startOtlpTracing } from '../observe/otlp-tracing.js';
import { operationsFor } from '../operations/index.js';
import type { Operation } from '../operations/index.js';
import { DeliveryReceipts } from '../outbox/delivery-receipts.js';
import { buildGateways } from '../outbox/gateway-list.js';
import type { Gateway } from '../outbox/gateways/gateway.js';
import { DELIVERY_RESULTS, OutboxWorker } from '../outbox/outbox-worker.js';
import { ProviderReceipts } from '../outbox/provider-receipts.js';
import { Pruner, retentionPolicy } from '../retention/pruner.js';
import { startShadow } from '../shadow/start-shadow.js';
import { smsSize } from '../sms/sms-segments.js';
import { DEMO_DATASET } from '../store/import/demo-data.js';
import { BackgroundStore } from '../store/open/background-store.js';
import { dialectFor } from '../store/open/open-store.js';
import { openStore } from '../store/open/open-store.js';
import type { OpenStoreOptions } from '../store/open/open-store.js';
import type { OutboxStore } from '../store/outbox-types.js';
import type { RetentionStore } from '../store/retention-types.js';
import type { ServiceStore, Store } from '../store/store.js';
import { listen } from './listen.js';
import { startSmsGuard } from './sms-guard-start.js';

/** A running service: its server, its store, and how to stop both. */
export interface App {
  readonly server: Server;
  readonly store: Store;
  /** The address it listens on (`http://127.0.0.1:PORT`, or https). */
  readonly url: string;
  /** This process's metrics. */
  readonly registry: Registry;
  /** Refuses new connections; requests on open ones are answered as usual (first step of a cluster's stop). */
  stopListening(): void;
  /**
   * Stops gracefully: no new connections, every request received is answered, idle
   * connections close after the grace period; then the store closes. Resolves true when no
   * request had to be cut at the shutdown time-out.
   */
  close(): Promise<boolean>;
}

export interface AppOptions {
  /** A store to use instead of opening SIS_DATABASE_URL (tests). */
  readonly store?: ServiceStore;
  /** Told when the database can never be opened (a retry cannot cure it): the process should exit. */
  readonly onFatal?: (err: unknown) => void;
  /** Given this process's registry, where /metrics comes from (a cluster worker asks its primary). */
  readonly metricsSource?: (registry: Registry) => () => Promise<MetricsText>;
  /**
   * The operations served, instead of those of SIS_RESULTS (tests: an operation added here is
   * routed, described and listed with no other edit).
   */
  readonly operations?: readonly Operation[];
  /** The clock operations read (tests: a fixed time, so counters of a clock hour do not roll over mid-test). */
  readonly now?: () => Date;
}

/**
 * Wires the pieces in the order a request meets them: store, operations' context, dispatcher,
 * gate, HTTP server. The first start on an empty database loads the demo data (unless disabled).
 */
export async function startApp(config: Config, log: Logger, options: AppOptions = {}): Promise<App> {
  const ownStore = options.store === undefined;
  const health = new DependencyHealth(log);
  const store = options.store ?? (await openOwnStore(config, log, health, options.onFatal));
  const watch = watchDatabase(health);
  const counted = countedStore(store, watch);
  const services = groupServices(options.operations ?? operationsFor(config.results));
  if (config.results === 'extended' && !pushSettingsProtected(config)) {
    log.warn(
      'SIS_RESULTS=extended answers the push server key to anyone who asks: set SIS_API_KEYS or SIS_ALLOW_FROM for PushNotificationMobile',
    );
  }
  const gateways = buildGateways(config);
  const outbox = startOutbox(config, log, store, health, gateways);
  const pruner = startPruner(config, log, store.retention);
  const sms = await startSmsGuard(config, log, store, health);
  const webhook = config.smsWebhook;
  const receipts =
    webhook?.receiptPath == null ? null : new DeliveryReceipts(webhook.receiptPath, webhook.receiptSecret, store, log);
  // Reports in the providers' own formats, at SIS_SMS_RECEIPT_PATH/<gateway> (or over SMPP's bind).
  const providerReceipts =
    gateways.length === 0 ? null : new ProviderReceipts(config.smsGateways.receiptPath, gateways, store, log);
  const reportBrake =
    receipts === null && providerReceipts?.path == null
      ? null
      : await createReportBrake(config.redisUrl, config.redisTimeoutMs, health.redis);
  const pooled = ownStore && dialectFor(config.databaseUrl).pooled;
  const { registry, requests } = createMetrics(services, {
    dbCallsInFlight: () => counted.inFlight,
    // Read at scrape time, once the dispatcher below exists.
    answerCache: () => dispatcher.cache,
    staleAnswers: () => dispatcher.stale,
    retention: () => pruner,
    ...(pooled ? { dbPoolMax: config.databasePoolSize } : {}),
    sms: sms.tally,
    ...(receipts === null && providerReceipts === null
      ? {}
      : { smsDeliveries: () => addedUp(receipts?.deliveries, providerReceipts?.deliveries) }),
    ...(reportBrake === null ? {} : { smsReportsRefused: reportBrake.refused }),
    outbox: {
      backlog: () => store.outboxBacklog(),
      deliveries: outbox?.deliveries ?? NO_DELIVERIES,
      ...(outbox === null ? {} : { accountRefused: outbox.accountRefused }),
    },
    health,
  });
  const limiter =
    config.rateLimit === null
      ? null
      : await createRateLimiter(
          config.rateLimit,
          config.redisUrl,
          config.redisTimeoutMs,
          health.redis,
          REQUEST_LIMITS,
          config.rateLimitIpv6Site,
        );
  const serviceNames = services.map((s) => s.name);
  const gate = new Gate(config, limiter, serviceNames);
  const state: ServerState = { draining: false };
  const metrics =
    options.metricsSource?.(registry) ??
    (async (): Promise<MetricsText> => ({ contentType: registry.contentType, body: await registry.metrics() }));
  const opened = (): boolean => !(store instanceof BackgroundStore) || store.ready;
  const ops = new OpsEndpoints({ store, log, health, draining: () => state.draining, opened, metrics });
  const context = {
    store: counted,
    now: options.now ?? ((): Date => new Date()),
    authCodes: authCodePolicyOf(config),
    sms,
    onAuthCodeAccepted: () => outbox?.wake(),
    onWritten: () => watch.wrote(),
    listPageRows: config.listPageRows,
  };
  const dispatcher = new Dispatcher(services, config, context, new MetadataEndpoint(config.namespace), true);
  const shadow = startShadow(config, log, {
    services,
    dispatcher,
    context,
    store,
    pruner,
    registry,
    health,
    smsGateway: gateways.length > 0,
  });
  // Loaded only when configured: without an endpoint no OpenTelemetry module is imported.
  const tracing = config.otlpEndpoint === null ? null : await startOtlpTracing(config.otlpEndpoint);
  const server = createHttpServer(config, shadow?.answerer ?? dispatcher, log, {
    state,
    metrics: requests,
    gate,
    ops,
    receipts,
    providerReceipts,
    reportBrake,
    tracing,
  });
  try {
    await shadow?.ready;
    await listen(server, config.port, config.host);
  } catch (err) {
    await outbox?.stop();
    await closeGateways(gateways);
    await pruner?.stop();
    await sms.stop();
    await gate.close();
    await reportBrake?.close();
    await tracing?.shutdown();
    if (ownStore) await store.close();
    throw err;
  }
  const addr = server.address() as AddressInfo;
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  const shown = host === '0.0.0.0' || host === '[::]' ? '127.0.0.1' : host;
  const url = `${config.tls === null ? 'http' : 'https'}://${shown}:${addr.port}`;
  const drainer = new Drainer(server, state);
  let closing: Promise<boolean> | undefined;
  return {
    server,
    store,
    url,
    registry,
    stopListening() {
      void drainer.stopListening();
    },
    close() {
      closing ??= (async () => {
        const clean = await drainer.drain(
          { graceMs: config.shutdownGraceMs, timeoutMs: config.shutdownTimeoutMs },
          log,
        );
        // The delivery in progress ends (and is recorded) while the store is still open; so do comparisons.
        await shadow?.stop();
        await outbox?.stop();
        await closeGateways(gateways);
        await pruner?.stop();
        await sms.stop();
        await gate.close();
        await reportBrake?.close();
        // The last requests' spans are sent before the process ends.
        await tracing?.shutdown();
        await store.close();
        return clean;
      })();
      return closing;
    },
  };
}

/** Without a gateway nothing is attempted: the counter still shows its results, at zero, for the default gateway. */
const NO_DELIVERIES: ReadonlyMap<string, ReadonlyMap<string, number>> = new Map([
  ['webhook', new Map(DELIVERY_RESULTS.map((r) => [r, 0]))],
]);

/** Our receipts and the providers' reports, added up by status (one sis_sms_delivery_total). */
function addedUp(...maps: (ReadonlyMap<string, number> | undefined)[]): ReadonlyMap<string, number> {
  const sum = new Map<string, number>();
  for (const m of maps) for (const [k, v] of m ?? []) sum.set(k, (sum.get(k) ?? 0) + v);
  return sum;
}

/** Ends the gateways' connections (SMPP's bind). */
async function closeGateways(gateways: readonly Gateway[]): Promise<void> {
  await Promise.all(gateways.map((g) => g.close?.()));
}

/** Whether the extended push settings are behind an API key or an allow-list. */
function pushSettingsProtected(config: Config): boolean {
  const covers = (services: readonly string[] | null): boolean =>
    services === null || services.includes('PushNotificationMobile');
  return (
    (config.apiKeys.length > 0 && covers(config.apiKeyServices)) ||
    (config.allowFrom.length > 0 && covers(config.allowFromServices))
  );
}

/**
 * Delivers the SMS outbox from this process (every instance and cluster worker runs one: claims
 * keep them from sending a message twice), through SIS_SMS_GATEWAY's gateways in order. Without
 * a gateway, accepted codes wait as pending. Each gateway is asked once, without a message, whether
 * it answers: one warning line each that does not (the start goes on: the outbox retries).
 */
function startOutbox(
  config: Config,
  log: Logger,
  store: OutboxStore,
  health: DependencyHealth,
  gateways: readonly Gateway[],
): OutboxWorker | null {
  if (gateways.length === 0) {
    log.info(
      'no SMS gateway configured (SIS_SMS_GATEWAY and its settings): accepted codes wait in the outbox as pending',
    );
    return null;
  }
  const { pollMs, maxAttempts, backoffMs, leaseMs } = config.outbox;
  const worker = new OutboxWorker(store, gateways, log, {
    pollMs,
    leaseMs,
    maxAttempts,
    // Doubling from the base, capped at 5 minutes (or at the base itself when that is longer).
    backoffMs: (attempt) => Math.max(backoffMs, Math.min(backoffMs * 2 ** (attempt - 1), 300_000)),
    batch: 20,
    health,
  });
  worker.start();
  log.info(
    { gateways: gateways.map((g) => g.name), pollMs, maxAttempts },
    'outbox: delivering codes through the SMS gateways',
  );
  for (const gateway of gateways)
    gateway.probe(Math.min(config.smsGateways.timeoutMs, 5000)).catch((err: unknown) => {
      log.warn(
        { gateway: gateway.name, problem: err instanceof Error ? err.message : String(err) },
        'outbox: an SMS gateway does not answer at start; codes wait in the outbox until it does (`sis check`)',
      );
    });
  const size = smsSize(config.smsGateways.template.split('{code}').join('123456'));
  if (size.segments > 1)
    log.warn(
      { ...size },
      'SIS_SMS_TEMPLATE with a 6-digit code takes more than one SMS segment, and each is billed: shorten it (docs/sms.md, The message)',
    );
  return worker;
}

/** As database-watch.ts's "unavailable" (requests failing meanwhile add no line), worded for the start. */
const NOT_REACHABLE_YET: Problem = {
  what: 'unavailable',
  level: 'warn',
  meanwhile:
    'not reachable at start; the service listens anyway, answers requests that need it with a server fault and /readyz with 503, and retries with back-off',
};

/**
 * Prunes what outlived its retention, from this process (every instance and cluster worker runs
 * one: batches skip rows another is pruning).
 */
function startPruner(config: Config, log: Logger, retention: RetentionStore): Pruner {
  const pruner = new Pruner(retention, retentionPolicy(config), log);
  pruner.start();
  return pruner;
}

/**
 * SQLite opens at once (a local file). PostgreSQL may not be up yet: the service starts anyway,
 * answers the documented server fault and reports not ready (/readyz) while it retries with
 * back-off, then loads the demo data once the database answers.
 */
async function openOwnStore(
  config: Config,
  log: Logger,
  health: DependencyHealth,
  onFatal?: (err: unknown) => void,
): Promise<ServiceStore> {
  const options: OpenStoreOptions = {
    poolSize: config.databasePoolSize,
    // Deadlines below any client's and the balancer's time-out (docs/operations.md, Partitions).
    connectTimeoutMs: config.databaseConnectTimeoutMs,
    queryTimeoutMs: config.databaseQueryTimeoutMs,
    maxWaiting: config.databaseMaxWaiting,
    ...(config.databaseStatementTimeoutMs === null ? {} : { statementTimeoutMs: config.databaseStatementTimeoutMs }),
    // A lost connection (the pool replaces it) is a database state change, logged once with the rest.
    onWritableAgain: () => noteDatabaseWritable(health),
    onBackgroundError: (err) => {
      if (!noteDatabaseFailure(health, err))
        log.warn({ err }, 'database connection error (the pool replaces the connection)');
    },
  };
  const loadDemo = async (store: Store): Promise<void> => {
    if (config.demoData && (await store.isEmpty())) {
      const report = await store.importDataset(DEMO_DATASET);
      log.info(report, 'empty database: demo data loaded');
    }
  };
  if (!dialectFor(config.databaseUrl).isServer) {
    const store = await openStore(config.databaseUrl, options);
    await loadDemo(store);
    return store;
  }
  // When the database answers at once, start as before: listening means ready. Only when the
  // first attempt fails with what time may cure (the server not up yet) does the service start
  // without it and keep retrying in the background; a refused login or a missing database stops
  // the start at once, as retrying would not help.
  let firstFailure: () => void = () => undefined;
  const failedOnce = new Promise<'retrying'>((resolve) => (firstFailure = () => resolve('retrying')));
  const store = new BackgroundStore(config.databaseUrl, options, {
    onAttemptFailed: ({ error, attempt, delayMs }) => {
      // One line when it starts, one when it ends (health.database.worked below); the attempts between at debug.
      health.database.failed(NOT_REACHABLE_YET, error);
      log.debug({ err: error, attempt, retryInMs: Math.round(delayMs) }, 'database not reachable yet: retrying');
      firstFailure();
    },
  });
  const first = await Promise.race([
    store.opened.then(
      () => 'open' as const,
      (err: unknown) => ({ err }),
    ),
    failedOnce,
  ]);
  if (typeof first === 'object') {
    await store.close();
    throw first.err;
  }
  store.opened.then(
    (ready) => {
      health.database.worked();
      void tellClockDifference(ready, health, log);
      return loadDemo(ready).catch((err: unknown) => log.error({ err }, 'demo data could not be loaded'));
    },
    // Opened later, then refused (the server came up, but with another password): the process
    // exits. Not when the store was closed while still trying (a stop signal).
    (err: unknown) => {
      if (!(err instanceof Error && err.name === 'AbortError')) onFatal?.(err);
    },
  );
  return store;
}
