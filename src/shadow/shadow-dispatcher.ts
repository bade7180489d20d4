/**
 * Beside the legacy service (docs/migrating.md). Wraps the dispatcher at the seam the HTTP layer
 * calls (`dispatch(exchange) → Outcome`), so nothing else changes:
 *
 * - `compare`: we answer the client as always; once our answer is on its way, the same request
 *   goes to the legacy service in the background and the answers are compared. The client never
 *   waits for the legacy service.
 * - `legacy`: the legacy service answers the client (status, content type, cache headers and body
 *   passed through); ours is computed in-process in the background (no HTTP to ourselves), with
 *   writes validated only (the dry-run dispatcher), and compared.
 *
 * An operation that writes (AuthCode; `writes` on its definition) is never sent twice: not
 * replayed in `compare`, only validated in `legacy`. What a request is (its service file, binding,
 * operation, whether it may write) is the bindings' route (bindings/route.ts), never guessed here;
 * its labels are those the metrics and the access log get for it.
 */
import { performance } from 'node:perf_hooks';
import type { Dispatcher } from '../bindings/dispatch.js';
import type { Outcome } from '../bindings/exchange.js';
import { namedOperation } from '../bindings/route.js';
import type { Route } from '../bindings/route.js';
import type { ShadowSettings } from '../config/config.js';
import type { HttpExchange } from '../http/http-exchange.js';
import type { Logger } from '../logging/logger.js';
import type { Reply } from '../reply/reply.js';
import type { Captured } from './capture.js';
import { captureReply, teeReply } from './capture.js';
import { Failover } from './failover.js';
import type { Comparer } from './in-process-comparer.js';
import type { Judgement, JudgeRules } from './judgement.js';
import { judge, recheckNoise } from './judgement.js';
import type { ForwardRequest, LegacyClient, LegacyResult } from './legacy-client.js';
import { modeOf } from './modes.js';
import type { ModeTable, ShadowMode } from './modes.js';
import { passThrough } from './pass-through.js';
import type { CountLabels, ShadowRecorder } from './recorder.js';

export interface ShadowParts {
  readonly settings: ShadowSettings;
  /** The mode of each operation and service file (SIS_SHADOW). */
  readonly modes: ModeTable;
  /** Whether a client address may route its own request (X-Shadow-Route); absent: nobody may. */
  readonly trusted?: (address: string) => boolean;
  readonly basePath: string;
  /** Ours, as the client gets it. */
  readonly dispatcher: Dispatcher;
  /** Ours with writes validated only (legacy mode's background answers). */
  readonly dryRun: Dispatcher;
  /** Legacy mode's client: the legacy service answers the client. */
  readonly legacy: LegacyClient;
  /** Compare mode's background half: the legacy service asked and its answer judged against ours. */
  readonly comparer: Comparer;
  readonly recorder: ShadowRecorder;
  readonly log: Logger;
  /** The accepted differences now, and how list items pair (legacy mode judges on this thread). */
  readonly rules: () => JudgeRules;
  /** Told of each fail-over (the metric). */
  readonly failedOver?: (answer: 'ours' | 'bad-gateway') => void;
  /** Whether this request is compared (SIS_SHADOW_SAMPLE); injectable for tests. */
  readonly sampled?: () => boolean;
}

/** Labels of one comparison: those of our answer (as metrics and the access log), else of the route; and its mode. */
type Labels = CountLabels;

/** What a comparison with a legacy left alone for refusing connections comes to (see Comparer.paused). */
const LEGACY_REFUSING: Judgement = { result: 'legacy-failed', kind: null, example: null };

const BAD_GATEWAY: Reply = { status: 502, contentType: null, body: '', invoked: false };

export class ShadowDispatcher {
  #inFlight = 0;
  readonly #sampled: () => boolean;
  readonly #failover: Failover;

  constructor(private readonly parts: ShadowParts) {
    const { sample } = parts.settings;
    this.#sampled = parts.sampled ?? (() => sample >= 1 || (sample > 0 && Math.random() < sample));
    this.#failover = new Failover(parts.settings.fallback, parts.failedOver);
  }

  /** Comparisons in progress (for tests and the benchmark). */
  get inFlight(): number {
    return this.#inFlight;
  }

  dispatch(ex: HttpExchange): Outcome | Promise<Outcome> {
    const { basePath, dispatcher } = this.parts;
    // Not under the base path: the legacy service has nothing there.
    if (!ex.url.startsWith(basePath)) return dispatcher.dispatch(ex);
    const route = dispatcher.route(ex);
    const mode = this.modeOf(ex, route);
    if (mode === 'off') return dispatcher.dispatch(ex);
    return mode === 'legacy' ? this.legacyAnswers(ex, route) : this.compare(ex, route);
  }

  /**
   * The request's mode: a tester's X-Shadow-Route (`ours`: ours alone; `legacy`: the legacy
   * answers) from a trusted address, else its operation's, its service file's or the default
   * (SIS_SHADOW). The header from anyone else is ignored, and logged.
   */
  private modeOf(ex: HttpExchange, route: Route | null): ShadowMode {
    const wanted = ex.header('x-shadow-route');
    if (wanted !== undefined) {
      const trusted = this.parts.trusted?.(ex.clientAddress) === true;
      if (trusted && (wanted === 'ours' || wanted === 'legacy')) return wanted === 'ours' ? 'off' : 'legacy';
      this.#ignoredRoute(ex.clientAddress, wanted, trusted);
    }
    const { modes } = this.parts;
    // One mode for all (no overrides): nothing of the request to look at.
    if (modes.services.size === 0 && modes.operations.size === 0) return modes.default;
    const operation = route === null ? null : (namedOperation(ex, route)?.name ?? null);
    return modeOf(modes, route?.service.name ?? null, operation);
  }

  /** Once a minute at most: a header ignored is worth a line, not a line per request. */
  #ignoredAt = -Infinity;
  #ignoredRoute(address: string, wanted: string, trusted: boolean): void {
    const now = performance.now();
    if (now - this.#ignoredAt < 60_000) return;
    this.#ignoredAt = now;
    this.parts.log.warn(
      { client: address, value: wanted.slice(0, 40) },
      trusted
        ? 'shadow: X-Shadow-Route ignored: it is ours or legacy'
        : 'shadow: X-Shadow-Route ignored: the caller is not in SIS_SHADOW_ROUTE_FROM (further ones are not logged for a minute)',
    );
  }

  /** A comparison may start: sampled, and under the in-flight cap. */
  private admitted(): boolean {
    if (this.#sampled() && this.#inFlight < this.parts.settings.maxInFlight) {
      this.#inFlight++;
      return true;
    }
    return false;
  }

  private compare(ex: HttpExchange, route: Route | null): Outcome | Promise<Outcome> {
    const { dispatcher } = this.parts;
    // A write is never replayed; a request not sampled or over the cap is not compared: both
    // counted `skipped`, under the labels our answer gets.
    if (route?.writes === true || !this.admitted())
      return counted(dispatcher.dispatch(ex), (outcome) => this.skipped(labelsOf(outcome, route)));
    if (this.parts.comparer.paused()) {
      // A legacy refusing connections: each comparison would fail at once, so none is sent.
      this.#inFlight--;
      return counted(dispatcher.dispatch(ex), (outcome) => this.apply(labelsOf(outcome, route), LEGACY_REFUSING));
    }
    // Read once, for both: our dispatcher and the copy for the legacy service get the same bytes.
    const body = ex.hasBody ? bodyOf(ex) : Promise.resolve(null);
    body.catch(() => undefined);
    return Promise.resolve(dispatcher.dispatch(ex)).then(
      (outcome) => {
        const { reply, captured } = teeReply(outcome.reply, this.parts.settings.maxAnswerBytes);
        this.replay(ex, route, outcome, body, captured)
          .catch((err: unknown) => this.parts.log.error({ err }, 'shadow: a comparison failed'))
          .finally(() => this.#inFlight--);
        return reply === outcome.reply ? outcome : { ...outcome, reply };
      },
      (err: unknown) => {
        this.#inFlight--;
        throw err;
      },
    );
  }

  /** Compare mode's background half: once ours is sent, the legacy service asked and the answers judged. */
  private async replay(
    ex: HttpExchange,
    route: Route | null,
    outcome: Outcome,
    bodyRead: Promise<Buffer | null>,
    captured: Promise<Captured | null>,
  ): Promise<void> {
    const labels = labelsOf(outcome, route);
    const body = await bodyRead.catch(() => undefined);
    const ours = await captured;
    // A body we refused, or an answer too large to compare: the legacy service is not asked.
    if (body === undefined || ours === null) return this.skipped(labels);
    const verdict = await this.parts.comparer.compare({
      labels,
      forward: this.forwardOf(ex, route, body, true),
      url: ex.url,
      ours,
      metadata: labels.binding === 'metadata',
      personal: route?.service.writes === true,
    });
    this.parts.recorder.legacyAnswered(verdict.seconds);
    this.apply(labels, verdict.judgement);
  }

  /**
   * Legacy mode: the legacy's answer is the client's, labelled (in metrics, the access log and
   * the comparison) as the route names it, as ASMX routes before the envelope is read.
   */
  private async legacyAnswers(ex: HttpExchange, route: Route | null): Promise<Outcome> {
    const { dispatcher, dryRun } = this.parts;
    const labels = routeLabels(route);
    let body: Buffer | null = null;
    try {
      body = ex.hasBody ? await ex.readBody() : null;
    } catch {
      // Refused (too large) or cut: ours answers that, as it would alone; the legacy is not asked.
      this.skipped(labels);
      return dispatcher.dispatch(ex);
    }
    const compared = this.admitted();
    if (!compared) this.skipped(labels);
    const ours = compared ? this.ours(dryRun, ex) : null;
    const result = await this.send(ex, route, body, false);
    if (ours !== null) {
      ours
        .then(({ outcome, captured }) => this.record(ex, body, withOperation(labels, outcome), result, captured, route))
        .catch((err: unknown) => this.parts.log.error({ err }, 'shadow: a comparison failed'))
        .finally(() => this.#inFlight--);
    } else if (!result.ok) {
      this.parts.recorder.count(labels, 'legacy-failed');
    }
    if (result.ok) {
      return { ...outcomeLabels(route), reply: passThrough(result.answer) };
    }
    // A write the legacy may have taken is not done again here: the client is told it failed.
    const mayAnswer = route?.writes !== true || !result.reached;
    if (!this.#failover.failed(mayAnswer)) return { ...outcomeLabels(route), reply: BAD_GATEWAY };
    return dispatcher.dispatch(ex);
  }

  /** Ours in the background: the reply read whole (a streamed list too); null if it cannot be compared. */
  private ours(dryRun: Dispatcher, ex: HttpExchange): Promise<{ outcome: Outcome | null; captured: Captured | null }> {
    return Promise.resolve(dryRun.dispatch(ex)).then(
      async (outcome) => ({
        outcome,
        captured: await captureReply(outcome.reply, this.parts.settings.maxAnswerBytes).catch(() => null),
      }),
      () => ({ outcome: null, captured: null }),
    );
  }

  private async send(ex: HttpExchange, route: Route | null, body: Buffer | null, copy: boolean): Promise<LegacyResult> {
    const result = await this.parts.legacy.send(this.forwardOf(ex, route, body, copy));
    this.parts.recorder.legacyAnswered(result.ok ? result.answer.seconds : result.seconds);
    return result;
  }

  /** The request as the legacy gets it; a `copy` (compare mode, a recheck) says so in X-Shadow-Copy. */
  private forwardOf(ex: HttpExchange, route: Route | null, body: Buffer | null, copy: boolean): ForwardRequest {
    return {
      method: ex.method,
      // Appended to SIS_LEGACY_URL: the target below SIS_BASE_PATH.
      relativeUrl: ex.url.slice(this.parts.basePath.length),
      // A valid traceparent of the caller's goes on; while tracing, the legacy call is a child of our span.
      rawHeaders: ex.onwardHeaders,
      body,
      clientAddress: ex.peerAddress,
      write: route?.writes === true,
      copy,
    };
  }

  /**
   * Legacy mode: our answer, computed here, judged here (a file that writes has its phones and
   * codes masked); a read judged different is asked of the legacy once more (recheckNoise).
   */
  private async record(
    ex: HttpExchange,
    body: Buffer | null,
    labels: Labels,
    result: LegacyResult,
    ours: Captured | null,
    route: Route | null,
  ): Promise<void> {
    const request = { method: ex.method, url: ex.url, rawHeaders: ex.rawHeaders, body };
    const metadata = labels.binding === 'metadata';
    const personal = route?.service.writes === true;
    const exchange = { labels, request, ours, metadata, personal };
    const rules = this.parts.rules();
    const write = route?.writes === true;
    const judged = await recheckNoise(judge(result, exchange, rules), result, exchange, rules, write, () =>
      this.send(ex, route, body, true),
    );
    this.apply(labels, judged);
  }

  private skipped(labels: Labels): void {
    this.parts.recorder.count(labels, 'skipped');
  }

  private apply(labels: Labels, judgement: Judgement): void {
    const { result, kind, example } = judgement;
    if (judgement.rules !== undefined) this.parts.recorder.ruleHits(judgement.rules);
    if ((result !== 'different' && result !== 'noisy') || kind === null || example === null)
      return this.parts.recorder.count(labels, result);
    this.parts.recorder.different(labels, kind, () => example, result);
  }
}

/** Compare mode: our answer's labels, the very ones the metrics and the access log get. */
function labelsOf(outcome: Outcome, route: Route | null): Labels {
  return {
    service: outcome.service ?? route?.service.name ?? null,
    operation: outcome.operation ?? route?.operation?.name ?? null,
    binding: outcome.binding ?? 'metadata',
    mode: 'compare',
  };
}

/** Legacy mode: the route's labels (the client's answer is the legacy's, labelled as routed). */
function routeLabels(route: Route | null): Labels {
  return {
    service: route?.service.name ?? null,
    operation: route?.operation?.name ?? null,
    binding: route?.binding?.name ?? 'metadata',
    mode: 'legacy',
  };
}

/** The route's labels, with the operation our answer found when the route could not name it (SOAP's is in the body). */
function withOperation(labels: Labels, outcome: Outcome | null): Labels {
  return labels.operation !== null || outcome?.operation === undefined
    ? labels
    : { ...labels, operation: outcome.operation };
}

/** The labels the request log and metrics get for an answer the legacy service gave. */
function outcomeLabels(route: Route | null): Omit<Outcome, 'reply'> {
  return {
    service: route?.service.name,
    operation: route?.operation?.name,
    binding: route?.binding?.name,
  };
}

/** The body as a promise, whether it was already read or is still arriving. */
function bodyOf(ex: HttpExchange): Promise<Buffer> {
  try {
    return Promise.resolve(ex.readBody());
  } catch (err) {
    return Promise.reject(err);
  }
}

/** Tells `count` of the outcome once there is one; the outcome itself is handed back as it comes. */
function counted(pending: Outcome | Promise<Outcome>, count: (outcome: Outcome) => void): Outcome | Promise<Outcome> {
  if (!(pending instanceof Promise)) {
    count(pending);
    return pending;
  }
  return pending.then((outcome) => {
    count(outcome);
    return outcome;
  });
}
