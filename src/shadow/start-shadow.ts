/**
 * Wires the shadow for a service process: the legacy client, the recorder (its counts flushed
 * every few seconds and at stop) and the dispatcher around ours; and the retention of what it
 * keeps, run by the pruner whatever the mode (records outlive a switch back to `off`).
 */
import type { Registry } from 'prom-client';
import { Dispatcher } from '../bindings/dispatch.js';
import { MetadataEndpoint } from '../bindings/metadata-endpoint.js';
import type { Config } from '../config/config.js';
import type { Answerer } from '../http/server.js';
import type { Logger } from '../logging/logger.js';
import type { DependencyHealth } from '../observe/dependency-health.js';
import { ShadowMetrics } from '../observe/shadow-metrics.js';
import type { OperationContext } from '../operations/context.js';
import type { Service } from '../operations/index.js';
import type { Pruner, PruneStep } from '../retention/pruner.js';
import type { ShadowStore } from '../store/shadow-types.js';
import type { ServiceStore } from '../store/store.js';
import { RuleWatch } from './accepted.js';
import { dryRunContext } from './dry-run.js';
import { InProcessComparer } from './in-process-comparer.js';
import { judgeRules } from './judgement.js';
import { LegacyClient } from './legacy-client.js';
import { anyOn, modeOf, modeTable, trustedAddresses } from './modes.js';
import type { ModeTable } from './modes.js';
import { ShadowRecorder } from './recorder.js';
import { ShadowDispatcher } from './shadow-dispatcher.js';
import { ThreadedComparer } from './threaded-comparer.js';

/** Counts are added to the database this often (and at stop): one write per instance, not per request. */
export const FLUSH_MS = 5000;

export interface ShadowWiring {
  readonly services: readonly Service[];
  readonly dispatcher: Dispatcher;
  /** Ours as the dispatcher runs it: the dry run is made of the same parts. */
  readonly context: OperationContext;
  /** Where comparisons are counted and differences kept. */
  readonly store: ServiceStore;
  readonly pruner: Pruner;
  /** Where the comparison metrics are registered. */
  readonly registry: Registry;
  /** The dependencies' states: the legacy service's is told by the comparisons (observe/shadow-metrics.ts). */
  readonly health?: DependencyHealth;
  /** Whether an SMS gateway is set (SIS_SMS_GATEWAY): during a quiet spell legacy mode's AuthCode is ours. */
  readonly smsGateway: boolean;
}

export interface RunningShadow {
  readonly answerer: Answerer;
  readonly dispatcher: ShadowDispatcher;
  /** Resolves once comparisons can start: the service listens after it. */
  readonly ready: Promise<void>;
  /** Stops after the last request: counts flushed, connections to the legacy closed. */
  stop(): Promise<void>;
}

/**
 * Null when SIS_SHADOW is off (the retention of earlier records is set up all the same). Nothing
 * to stop before the first request: the flush timer does not hold the process, the agent has no
 * connection yet.
 */
export function startShadow(config: Config, log: Logger, wiring: ShadowWiring): RunningShadow | null {
  const settings = config.shadow;
  const store = wiring.store.shadow;
  const step = shadowPruneStep(store, settings.retentionMs);
  if (step !== null) wiring.pruner.addStep(step);
  const { services, context } = wiring;
  // A name the contract does not have stops the start, naming the closest.
  const modes = modeTable(settings.mode, services);
  if (!anyOn(modes) || settings.legacyUrl === null) return null;
  const compares = [modes.default, ...modes.services.values(), ...modes.operations.values()].includes('compare');
  const legacyState = wiring.health?.legacy ?? null;
  legacyState?.affects(
    settings.fallback
      ? 'comparisons count legacy-failed, clients of legacy mode get our answers (fail-over)'
      : 'comparisons count legacy-failed, clients of legacy mode get 502 (SIS_SHADOW_FALLBACK=off)',
  );
  const metrics = new ShadowMetrics(wiring.registry, legacyState);
  const metadata = new MetadataEndpoint(config.namespace);
  // Beside the legacy service, which does the writes: ours validates them only (a store that
  // refuses writes), and keeps no answers.
  const dryContext = dryRunContext(context, (err) =>
    log.error({ err }, 'shadow: an operation tried to write in a dry run'),
  );
  const dryRun = new Dispatcher(services, { ...config, answerCacheBytes: 0 }, dryContext, metadata);
  const client = {
    timeoutMs: settings.timeoutMs,
    maxAnswerBytes: settings.maxAnswerBytes,
    maxSockets: settings.maxInFlight,
  };
  const legacy = new LegacyClient(settings.legacyUrl, client);
  if (settings.fallback && !wiring.smsGateway && writesInLegacyMode(modes, services))
    log.warn(
      'shadow: legacy mode with SIS_SHADOW_FALLBACK=on and no SMS gateway (SIS_SMS_GATEWAY): while the legacy service is not answering, AuthCode is taken by ours and its codes would wait in the outbox unsent; set a gateway, or SIS_SHADOW_FALLBACK=off (a 502 instead)',
    );
  // Compare mode's requests to the legacy service and their comparisons run on a worker thread.
  const judging = judgeRules(settings, services);
  const comparer = compares
    ? new ThreadedComparer({ legacyUrl: settings.legacyUrl, client, rules: judging }, log)
    : new InProcessComparer(legacy, judging);
  const recorder = new ShadowRecorder(store, metrics, log, { keep: settings.keep, flushMs: FLUSH_MS });
  recorder.start();
  const rules = new RuleWatch(store, log, (current) => comparer.setRules(current));
  const dispatcher = new ShadowDispatcher({
    settings,
    modes,
    ...(settings.routeFrom.length === 0 ? {} : { trusted: trustedAddresses(settings.routeFrom) }),
    basePath: config.basePath,
    dispatcher: wiring.dispatcher,
    dryRun,
    legacy,
    // ASMX's discovery page: cheap, and every service file has one.
    probePath: `${services[0]?.name ?? ''}.asmx?disco`,
    comparer,
    recorder,
    rules: () => ({ ...judging, accept: rules.current }),
    log,
    failedOver: (answer) => metrics?.failedOver(answer),
  });
  log.info(
    { mode: settings.mode, legacy: new URL(settings.legacyUrl).origin, sample: settings.sample },
    modes.default === 'legacy'
      ? 'shadow: the legacy service answers clients; ours is computed beside it and compared'
      : modes.default === 'compare'
        ? 'shadow: we answer clients; the legacy service gets a copy and the answers are compared'
        : 'shadow: beside the legacy service for the operations SIS_SHADOW names',
  );
  return {
    answerer: dispatcher,
    dispatcher,
    ready: Promise.all([comparer.ready(), rules.start()]).then(() => undefined),
    async stop() {
      // Comparisons still waiting for the legacy service end within its time-out: counted, then flushed.
      const until = Date.now() + settings.timeoutMs + 1000;
      while (dispatcher.inFlight > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
      rules.stop();
      await recorder.stop();
      await comparer.close();
      legacy.close();
    },
  };
}

/** Whether an operation that writes (AuthCode: an SMS) is in legacy mode, so ours may take it in a fail-over. */
function writesInLegacyMode(modes: ModeTable, services: readonly Service[]): boolean {
  return services.some((s) =>
    s.operations.some((op) => op.writes === true && modeOf(modes, s.name, op.name) === 'legacy'),
  );
}

/** The pruner's step for the shadow's records (none when they are kept forever). */
export function shadowPruneStep(store: ShadowStore, retentionMs: number): PruneStep | null {
  if (retentionMs <= 0) return null;
  return {
    name: 'shadow',
    prune: (now, limit) => store.prune(new Date(now.getTime() - retentionMs), limit),
  };
}
