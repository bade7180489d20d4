/**
 * Prometheus metrics. The request counter and histogram are kept in plain numbers behind nested
 * maps keyed by the outcome's (interned) strings, and handed to prom-client only when scraped:
 * prom-client's own label children hash their labels into a new string on every call, and the
 * hot path should not allocate for a metric.
 */
import { Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import type { Metric } from 'prom-client';
import type { Service } from '../operations/index.js';
import type { OutboxBacklog } from '../store/outbox-types.js';
import type { DependencyHealth } from './dependency-health.js';
import { RouteTree } from './route-tree.js';

export const BINDINGS = ['soap11', 'soap12', 'httpget', 'httppost'] as const;

/** Seconds; finer at the low end, where this service's answers are. */
export const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] as const;

interface Series {
  readonly service: string;
  readonly operation: string;
  readonly binding: string;
  /** status -> requests */
  readonly statuses: Map<number, number>;
  /** Requests per bucket, not cumulative; the last slot is +Inf. */
  readonly buckets: Float64Array;
  sum: number;
  count: number;
}

type Labels = Record<string, string | number>;
interface Value {
  labels: Labels;
  value: number;
  metricName?: string;
}

/** The request counter and duration histogram over one set of series. */
export class RequestMetrics {
  private readonly all: Series[] = [];
  private readonly tree = new RouteTree<Series>((service, operation, binding) => {
    const s: Series = {
      service,
      operation,
      binding,
      statuses: new Map(),
      buckets: new Float64Array(DURATION_BUCKETS.length + 1),
      sum: 0,
      count: 0,
    };
    this.all.push(s);
    return s;
  });
  inFlight = 0;

  /** Creates the series of every service × operation × binding now, so requests find them ready. */
  constructor(services: readonly Service[] = []) {
    for (const s of services)
      for (const op of s.operations) for (const b of BINDINGS) this.tree.get(s.name, op.name, b);
  }

  observe(
    service: string | undefined,
    operation: string | undefined,
    binding: string | undefined,
    status: number,
    seconds: number,
  ): void {
    const s = this.tree.get(service ?? '', operation ?? '', binding ?? '');
    s.statuses.set(status, (s.statuses.get(status) ?? 0) + 1);
    let i = 0;
    while (i < DURATION_BUCKETS.length && seconds > DURATION_BUCKETS[i]!) i++;
    s.buckets[i]!++;
    s.sum += seconds;
    s.count++;
  }

  /** The counter in prom-client's metric shape (series never used are left out). */
  counterValues(): Value[] {
    const values: Value[] = [];
    for (const s of this.all) {
      for (const [status, n] of s.statuses) {
        values.push({ labels: { service: s.service, operation: s.operation, binding: s.binding, status }, value: n });
      }
    }
    return values;
  }

  histogramValues(name: string): Value[] {
    const values: Value[] = [];
    for (const s of this.all) {
      if (s.count === 0) continue;
      const labels = { service: s.service, operation: s.operation, binding: s.binding };
      let cumulative = 0;
      DURATION_BUCKETS.forEach((le, i) => {
        cumulative += s.buckets[i]!;
        values.push({ labels: { ...labels, le }, value: cumulative, metricName: `${name}_bucket` });
      });
      values.push({ labels: { ...labels, le: '+Inf' }, value: s.count, metricName: `${name}_bucket` });
      values.push({ labels, value: s.sum, metricName: `${name}_sum` });
      values.push({ labels, value: s.count, metricName: `${name}_count` });
    }
    return values;
  }
}

export interface MetricsOptions {
  /** Database calls in progress right now. */
  readonly dbCallsInFlight?: () => number;
  /** The PostgreSQL pool's size, when there is a pool. */
  readonly dbPoolMax?: number;
  /** The answer cache's counts, when there is one. */
  readonly answerCache?: () => { readonly hits: number; readonly misses: number; readonly bytes: number } | null;
  /** The reads' last answers kept for when the database does not answer, when kept. */
  readonly staleAnswers?: () => { readonly served: number; readonly bytes: number } | null;
  /** Retention: rows per table at the last pruning round (null before it), rows this process pruned. */
  readonly retention?: () => {
    readonly kept: Readonly<Record<string, number>> | null;
    readonly pruned: Readonly<Record<string, number>>;
  };
  /** AuthCode's refusals by reason (would-be ones of monitor mode apart) and codes queued by country (src/sms/refusal-tally.ts). */
  readonly sms?: {
    readonly refusals: ReadonlyMap<string, number>;
    readonly monitoredRefusals: ReadonlyMap<string, number>;
    readonly queued: ReadonlyMap<string, number>;
  };
  /** What the SMS gateway's delivery receipts said, by status (src/outbox/delivery-receipts.ts). */
  readonly smsDeliveries?: () => ReadonlyMap<string, number>;
  /** Refused delivery reports by gateway, then reason (src/http/report-brake.ts). */
  readonly smsReportsRefused?: ReadonlyMap<string, ReadonlyMap<string, number>>;
  /** The outbox: its backlog, read from the database at scrape time; this process's attempts by gateway and result. */
  readonly outbox?: {
    readonly backlog: () => Promise<OutboxBacklog>;
    readonly deliveries: ReadonlyMap<string, ReadonlyMap<string, number>>;
    /** By gateway: whether its last answer refused our account or configuration (1) or not (0). */
    readonly accountRefused?: ReadonlyMap<string, number>;
  };
  /** The dependencies' states, as /readyz reads them. */
  readonly health?: DependencyHealth;
}

/** A registry with the request metrics, database gauges and Node's default metrics. */
export function createMetrics(
  services: readonly Service[],
  options: MetricsOptions = {},
): { registry: Registry; requests: RequestMetrics } {
  const registry = new Registry();
  const requests = new RequestMetrics(services);
  registry.registerMetric(
    custom({
      name: 'sis_requests_total',
      help: 'Requests answered, by service file, operation, binding and HTTP status.',
      type: 'counter',
      values: () => requests.counterValues(),
    }),
  );
  registry.registerMetric(
    custom({
      name: 'sis_request_duration_seconds',
      help: 'Time from a request’s arrival to its answer being written, by service file, operation and binding.',
      type: 'histogram',
      values: () => requests.histogramValues('sis_request_duration_seconds'),
    }),
  );
  new Gauge({
    name: 'sis_requests_in_flight',
    help: 'Requests received and not yet answered.',
    registers: [registry],
    collect() {
      this.set(requests.inFlight);
    },
  });
  const inFlight = options.dbCallsInFlight;
  if (inFlight !== undefined) {
    new Gauge({
      name: 'sis_db_calls_in_flight',
      help: 'Database calls in progress (with PostgreSQL: connections in use, or waited for beyond the pool size).',
      registers: [registry],
      collect() {
        this.set(inFlight());
      },
    });
  }
  if (options.dbPoolMax !== undefined) {
    const max = new Gauge({
      name: 'sis_db_pool_max_connections',
      help: 'Size of the PostgreSQL connection pool.',
      registers: [registry],
    });
    max.set(options.dbPoolMax);
  }
  const cache = options.answerCache;
  if (cache !== undefined) {
    for (const [name, help, read] of [
      [
        'sis_answer_cache_hits_total',
        'Answers of cacheable operations served from the cache (data unchanged since kept).',
        'hits',
      ],
      [
        'sis_answer_cache_misses_total',
        'Answers of cacheable operations built from the database (absent, or the data changed).',
        'misses',
      ],
    ] as const) {
      registry.registerMetric(
        custom({ name, help, type: 'counter', values: () => [{ labels: {}, value: cache()?.[read] ?? 0 }] }),
      );
    }
    new Gauge({
      name: 'sis_answer_cache_bytes',
      help: 'Bytes of answers held by the answer cache.',
      registers: [registry],
      collect() {
        this.set(cache()?.bytes ?? 0);
      },
    });
  }
  const stale = options.staleAnswers;
  if (stale !== undefined) {
    registry.registerMetric(
      custom({
        name: 'sis_answers_stale_total',
        help: 'Reads answered as before because the database did not answer, or not in time (SIS_STALE_IF_ERROR_MS, SIS_STALE_AFTER_MS).',
        type: 'counter',
        values: () => [{ labels: {}, value: stale()?.served ?? 0 }],
      }),
    );
    new Gauge({
      name: 'sis_stale_answers_bytes',
      help: 'Bytes of reads’ last answers kept for when the database does not answer (SIS_STALE_ANSWERS_BYTES).',
      registers: [registry],
      collect() {
        this.set(stale()?.bytes ?? 0);
      },
    });
  }
  if (options.retention !== undefined) registerRetention(registry, options.retention);
  if (options.sms !== undefined) registerSms(registry, options.sms);
  const deliveries = options.smsDeliveries;
  const reportsRefused = options.smsReportsRefused;
  const reports = [
    ...(deliveries === undefined
      ? []
      : [
          custom({
            name: 'sis_sms_delivery_total',
            help: 'Delivery receipts the SMS gateway sent this process, by status (delivered, failed, undelivered; docs/sms.md).',
            type: 'counter',
            values: () => [...deliveries()].map(([status, value]) => ({ labels: { status }, value })),
          }),
        ]),
    ...(reportsRefused === undefined
      ? []
      : [
          custom({
            name: 'sis_sms_reports_refused_total',
            help: 'Delivery reports (ours and the providers’) this process refused, by gateway and reason (unauthenticated, braked, malformed…; docs/security.md).',
            type: 'counter',
            values: () =>
              [...reportsRefused].flatMap(([gateway, reasons]) =>
                [...reasons].map(([reason, value]) => ({ labels: { gateway, reason }, value })),
              ),
          }),
        ]),
  ];
  for (const metric of reports) registry.registerMetric(metric);
  if (options.outbox !== undefined) registerOutbox(registry, options.outbox);
  if (options.health !== undefined) registerHealth(registry, options.health);
  collectDefaultMetrics({ register: registry });
  return { registry, requests };
}

function registerRetention(registry: Registry, retention: NonNullable<MetricsOptions['retention']>): void {
  registry.registerMetric(
    custom({
      name: 'sis_retention_pruned_rows_total',
      help: 'Rows removed by this process because they outlived their retention, by table.',
      type: 'counter',
      values: () => Object.entries(retention().pruned).map(([table, value]) => ({ labels: { table }, value })),
    }),
  );
  new Gauge({
    name: 'sis_retention_rows',
    help: 'Rows kept in each table with a retention, as counted at the end of the last pruning round.',
    labelNames: ['table'],
    registers: [registry],
    // Every worker counts the same database: the largest (newest under growth) rather than the sum.
    aggregator: 'max',
    collect() {
      for (const [table, value] of Object.entries(retention().kept ?? {})) this.set({ table }, value);
    },
  });
}

function registerSms(registry: Registry, sms: NonNullable<MetricsOptions['sms']>): void {
  registry.registerMetric(
    custom({
      name: 'sis_auth_code_refusals_total',
      help: 'AuthCode codes refused by this process, by reason; mode="monitor": would have been refused by a layer that only watches (docs/sms.md).',
      type: 'counter',
      values: () => [
        ...[...sms.refusals].map(([reason, value]) => ({ labels: { reason }, value })),
        ...[...sms.monitoredRefusals].map(([reason, value]) => ({ labels: { reason, mode: 'monitor' }, value })),
      ],
    }),
  );
  registry.registerMetric(
    custom({
      name: 'sis_sms_queued_total',
      help: 'AuthCode codes accepted and queued for SMS by this process, by country of the phone (unknown when it cannot be told).',
      type: 'counter',
      values: () => [...sms.queued].map(([country, value]) => ({ labels: { country }, value })),
    }),
  );
}

function registerOutbox(registry: Registry, outbox: NonNullable<MetricsOptions['outbox']>): void {
  registry.registerMetric(
    custom({
      name: 'sis_outbox_deliveries_total',
      help: 'SMS delivery attempts made by this process, by gateway and result (delivered; fallback: refused or failed, the next gateway tried; retry: failed, tried again later; failed: for good).',
      type: 'counter',
      values: () =>
        [...outbox.deliveries].flatMap(([gateway, results]) =>
          [...results].map(([result, value]) => ({ labels: { gateway, result }, value })),
        ),
    }),
  );
  const accountRefused = outbox.accountRefused;
  if (accountRefused !== undefined)
    new Gauge({
      name: 'sis_sms_gateway_account_refused',
      help: "Whether the gateway's last answer refused the account or its configuration, not the number (1; docs/sms.md, Refusals of the account): every code fails alike until an operator fixes it.",
      labelNames: ['gateway'],
      registers: [registry],
      // With workers, one refused is enough to show it.
      aggregator: 'max',
      collect() {
        for (const [gateway, value] of accountRefused) this.set({ gateway }, value);
      },
    });
  // Read once per scrape for both gauges; every worker reads the same database, hence max, not sum.
  let reading: Promise<OutboxBacklog | null> | null = null;
  const backlog = (): Promise<OutboxBacklog | null> =>
    (reading ??= outbox
      .backlog()
      .catch(() => null) // the database is down: its own metric says so; the gauges keep their last values
      .finally(() => setImmediate(() => (reading = null))));
  new Gauge({
    name: 'sis_outbox_pending_messages',
    help: 'SMS messages accepted and not yet delivered or failed for good.',
    registers: [registry],
    aggregator: 'max',
    async collect() {
      const b = await backlog();
      if (b !== null) this.set(b.pending);
    },
  });
  new Gauge({
    name: 'sis_outbox_oldest_pending_age_seconds',
    help: 'Age of the oldest SMS message still waiting for delivery (0 when none waits).',
    registers: [registry],
    aggregator: 'max',
    async collect() {
      const b = await backlog();
      if (b !== null)
        this.set(b.oldestPendingAt === null ? 0 : Math.max(0, (Date.now() - b.oldestPendingAt.getTime()) / 1000));
    },
  });
}

function registerHealth(registry: Registry, health: DependencyHealth): void {
  const dependencies = [
    ['database', health.database],
    ['database_writes', health.databaseWrites],
    ['redis', health.redis],
    ['sms_gateway', health.smsGateway],
    ['legacy_service', health.legacy],
  ] as const;
  new Gauge({
    name: 'sis_dependency_up',
    help: 'Whether a dependency works as far as this process saw (1) or is failing (0): database, database_writes, redis, sms_gateway, legacy_service (docs/operations.md, Failures while running).',
    labelNames: ['dependency'],
    registers: [registry],
    // With workers, one failing is enough to show it.
    aggregator: 'min',
    collect() {
      for (const [dependency, d] of dependencies) this.set({ dependency }, d.problem === null ? 1 : 0);
    },
  });
}

/** A metric whose values are computed at scrape time; prom-client only calls `get()` on it. */
function custom(spec: { name: string; help: string; type: 'counter' | 'histogram'; values: () => Value[] }): Metric {
  const metric = {
    name: spec.name,
    help: spec.help,
    type: spec.type,
    aggregator: 'sum',
    get: async () => ({ name: spec.name, help: spec.help, type: spec.type, aggregator: 'sum', values: spec.values() }),
  };
  return metric as unknown as Metric;
}
