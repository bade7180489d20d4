/**
 * Beside the legacy service (docs/migrating.md). Wraps the dispatcher at the seam the HTTP layer
 * calls (`dispatch(exchange) → Outcome`), so nothing else changes:
 *
 * - `compare`: we answer the client as always; once our answer is on its way, the same request
 *   goes to the legacy service in the background and the answers are compared. The client never
 *   waits for the legacy service.
 * - `legacy`: the legacy service answers the client (status, content type, cache headers and body
 *   passed through); ours is computed in-process in the background (no HTTP to ourselves), with
 *   writes validated only (the dry-run dispatcher, over a store that refuses writes), and compared.
 *
 * What a request is comes from the bindings, as ASMX would route it, before anyone answers: its
 * route, then (a call) its binding's read, once, with its body (SOAP names its operation there),
 * which ours then answers. The operation so found decides the mode, whether the request may write
 * (an operation that writes, or one not known, is never sent twice: not replayed in `compare`,
 * only validated in `legacy`), the labels of the metrics, the access log and the comparison, and
 * the personal data masked where an example is kept.
 *
 * A comparison holds one of SIS_SHADOW_MAX_IN_FLIGHT places from admission until its verdict,
 * whatever comes of it (`Slot`): no client can keep places taken.
 *
 * One concept over 400 lines: one request's path beside the legacy service. The mode it takes,
 * its admission, the two modes' halves and the labels they all share read the same `Known` request
 * and the same counters, and split apart they would pass both around; what stands alone is in its
 * own file already (capture, comparison, failover, judgement, the legacy client, masking).
 */
import { performance } from 'node:perf_hooks';
import type { Dispatcher } from '../bindings/dispatch.js';
import { operationOf } from '../bindings/route.js';
import type { Outcome, Read, Route } from '../bindings/types.js';
import type { ShadowSettings } from '../config/config.js';
import type { HttpExchange } from '../http/http-exchange.js';
import type { Logger } from '../logging/logger.js';
import type { Operation } from '../operations/index.js';
import type { Reply } from '../reply/reply.js';
import type { Captured } from './capture.js';
import { captureReply, teeReply } from './capture.js';
import { compareWithLegacy } from './comparison.js';
import type { ComparisonJob } from './comparison.js';
import { Failover, NOT_FORWARDED } from './failover.js';
import type { Comparer } from './in-process-comparer.js';
import type { Judgement, JudgeRules } from './judgement.js';
import type { ForwardRequest, LegacyClient, LegacyResult } from './legacy-client.js';
import { personalOf } from './mask.js';
import type { Personal } from './mask.js';
import { modeOf } from './modes.js';
import type { ModeTable, ShadowMode } from './modes.js';
import { passThrough } from './pass-through.js';
import { OVER_CAP } from './recorder.js';
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
  /** What our own probe of the legacy asks (below SIS_LEGACY_URL): a cheap page, `X.asmx?disco`. */
  readonly probePath: string;
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

/** What the shadow knows of a request before anyone answers it. */
interface Known {
  /** Null: the target names no service file of ours. */
  readonly route: Route | null;
  /** A `call` route's request as its binding read it (its body read once); null for other routes. */
  readonly read: Read | null;
  /** The operation ASMX would run: the call's, or the one the read names; null when none is known. */
  readonly operation: Operation | null;
  /** It may change something (its operation writes, or which it is cannot be known): never sent twice. */
  readonly writes: boolean;
}

/** What a comparison with a legacy left alone for refusing connections comes to (see Comparer.paused). */
const LEGACY_REFUSING: Judgement = { result: 'legacy-failed', kind: null, example: null };

const BAD_GATEWAY: Reply = { status: 502, contentType: null, body: '', invoked: false };

/** One of SIS_SHADOW_MAX_IN_FLIGHT places, given back once whatever the comparison's fate. */
type Slot = () => void;

export class ShadowDispatcher {
  #inFlight = 0;
  readonly #sampled: () => boolean;
  readonly #failover: Failover;

  constructor(private readonly parts: ShadowParts) {
    const { sample } = parts.settings;
    this.#sampled = parts.sampled ?? (() => sample >= 1 || (sample > 0 && Math.random() < sample));
    this.#failover = new Failover(parts.settings.fallback, () => parts.legacy.probe(parts.probePath), parts.failedOver);
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
    // A target of no service file of ours may be one of the legacy's: what it runs is not known.
    if (route === null) return this.decide(ex, { route, read: null, operation: null, writes: true });
    if (route.kind !== 'call') return this.decide(ex, { route, read: null, operation: null, writes: false });
    const read = dispatcher.read(ex, route);
    if (read instanceof Promise) return read.then((whole) => this.decide(ex, known(route, whole)));
    return this.decide(ex, known(route, read));
  }

  private decide(ex: HttpExchange, known: Known): Outcome | Promise<Outcome> {
    const mode = this.modeOf(ex, known);
    if (mode === 'off') return answer(this.parts.dispatcher, ex, known);
    return mode === 'legacy' ? this.legacyAnswers(ex, known) : this.compare(ex, known);
  }

  /**
   * The request's mode: a tester's X-Shadow-Route (`ours`: ours alone; `legacy`: the legacy
   * answers) from a trusted address, else its operation's, its service file's or the default
   * (SIS_SHADOW). The header from anyone else is ignored, and logged.
   */
  private modeOf(ex: HttpExchange, known: Known): ShadowMode {
    const wanted = ex.header('x-shadow-route');
    if (wanted !== undefined) {
      const trusted = this.parts.trusted?.(ex.clientAddress) === true;
      if (trusted && (wanted === 'ours' || wanted === 'legacy')) return wanted === 'ours' ? 'off' : 'legacy';
      this.#ignoredRoute(ex.client, wanted, trusted);
    }
    return modeOf(this.parts.modes, known.route?.service.name ?? null, known.operation?.name ?? null);
  }

  /** Once a minute at most: a header ignored is worth a line, not a line per request. */
  #ignoredAt = -Infinity;
  #ignoredRoute(client: string, wanted: string, trusted: boolean): void {
    const now = performance.now();
    if (now - this.#ignoredAt < 60_000) return;
    this.#ignoredAt = now;
    this.parts.log.warn(
      { client, value: wanted.slice(0, 40) },
      trusted
        ? 'shadow: X-Shadow-Route ignored: it is ours or legacy'
        : 'shadow: X-Shadow-Route ignored: the caller is not in SIS_SHADOW_ROUTE_FROM (further ones are not logged for a minute)',
    );
  }

  /**
   * A comparison may start: sampled, and under the in-flight cap. Its place is given back by the
   * slot it gets, once, however the comparison ends.
   */
  private admitted(): Slot | 'not-sampled' | 'over-cap' {
    if (!this.#sampled()) return 'not-sampled';
    if (this.#inFlight >= this.parts.settings.maxInFlight) return 'over-cap';
    this.#inFlight++;
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      this.#inFlight--;
    };
  }

  /** Not compared: not sampled (`skipped`), or over the cap (`skipped`, counted apart: overCap). */
  private notAdmitted(labels: Labels, why: 'not-sampled' | 'over-cap'): void {
    if (why === 'over-cap') this.overCap(labels);
    else this.skipped(labels);
  }

  /** Skipped for the in-flight cap: counted as such (the metric, the report), and said in a line a minute at most. */
  #overCapAt = -Infinity;
  #overCapSince = 0;
  private overCap(labels: Labels): void {
    this.parts.recorder.count(labels, 'skipped', OVER_CAP);
    this.#overCapSince++;
    const now = performance.now();
    if (now - this.#overCapAt < 60_000) return;
    this.parts.log.warn(
      { skipped: this.#overCapSince, maxInFlight: this.parts.settings.maxInFlight },
      'shadow: comparisons skipped: SIS_SHADOW_MAX_IN_FLIGHT comparisons are in flight (the legacy service is slow, or the load too high for the cap); further ones are counted (sis_shadow_over_cap_total), not logged, for a minute',
    );
    this.#overCapAt = now;
    this.#overCapSince = 0;
  }

  private compare(ex: HttpExchange, known: Known): Outcome | Promise<Outcome> {
    const { dispatcher } = this.parts;
    // A write is never replayed; a request not sampled or over the cap is not compared: all
    // counted `skipped`, under the labels our answer gets.
    if (known.writes)
      return counted(answer(dispatcher, ex, known), (outcome) => this.skipped(labelsOf(outcome, known)));
    const slot = this.admitted();
    if (typeof slot !== 'function')
      return counted(answer(dispatcher, ex, known), (outcome) => this.notAdmitted(labelsOf(outcome, known), slot));
    if (this.parts.comparer.paused()) {
      // A legacy refusing connections: each comparison would fail at once, so none is sent.
      slot();
      return counted(answer(dispatcher, ex, known), (outcome) => this.apply(labelsOf(outcome, known), LEGACY_REFUSING));
    }
    // Read once, for both: our dispatcher and the copy for the legacy service get the same bytes.
    const body = ex.hasBody ? bodyOf(ex) : Promise.resolve(null);
    body.catch(() => undefined);
    let pending: Outcome | Promise<Outcome>;
    try {
      pending = answer(dispatcher, ex, known);
    } catch (err) {
      slot();
      throw err;
    }
    return Promise.resolve(pending).then(
      (outcome) => {
        const { reply, captured } = teeReply(outcome.reply, this.parts.settings.maxAnswerBytes);
        this.replay(ex, known, outcome, body, captured)
          .catch((err: unknown) => this.parts.log.error({ err }, 'shadow: a comparison failed'))
          .finally(slot);
        return reply === outcome.reply ? outcome : { ...outcome, reply };
      },
      (err: unknown) => {
        slot();
        throw err;
      },
    );
  }

  /** Compare mode's background half: once ours is sent, the legacy service asked and the answers judged. */
  private async replay(
    ex: HttpExchange,
    known: Known,
    outcome: Outcome,
    bodyRead: Promise<Buffer | null>,
    captured: Promise<Captured | null>,
  ): Promise<void> {
    const labels = labelsOf(outcome, known);
    const body = await bodyRead.catch(() => undefined);
    const ours = await captured;
    // A body we refused, or an answer too large to compare: the legacy service is not asked.
    if (body === undefined || ours === null) return this.skipped(labels);
    const verdict = await this.parts.comparer.compare(this.jobOf(ex, known, labels, body, ours, true));
    const { result } = verdict.judgement;
    // A skipped comparison (a lost worker) may not have asked the legacy service: it tells nothing of it.
    this.parts.recorder.legacyAnswered(verdict.seconds, result === 'skipped' ? null : result !== 'legacy-failed');
    this.apply(labels, verdict.judgement);
  }

  /**
   * Legacy mode: the legacy's answer is the client's, labelled (in metrics, the access log and
   * the comparison) by the operation ASMX runs for it, as ours would be.
   */
  private async legacyAnswers(ex: HttpExchange, known: Known): Promise<Outcome> {
    const { dispatcher, dryRun } = this.parts;
    const labels = knownLabels(known);
    let body: Buffer | null = null;
    try {
      body = ex.hasBody ? await ex.readBody() : null;
    } catch {
      // Refused (too large) or cut: ours answers that, as it would alone; the legacy is not asked.
      this.skipped(labels);
      return answer(dispatcher, ex, known);
    }
    const slot = this.admitted();
    if (typeof slot !== 'function') this.notAdmitted(labels, slot);
    const ours = typeof slot === 'function' ? this.ours(dryRun, ex, known) : null;
    let result: LegacyResult;
    try {
      result = await this.forwardOwn(ex, known, body);
    } catch (err) {
      if (typeof slot === 'function') slot();
      throw err;
    }
    if (ours !== null && typeof slot === 'function') {
      ours
        .then((captured) => this.record(ex, known, labels, body, result, captured))
        .catch((err: unknown) => this.parts.log.error({ err }, 'shadow: a comparison failed'))
        .finally(slot);
    } else if (!result.ok) {
      this.parts.recorder.count(labels, 'legacy-failed');
    }
    if (result.ok) {
      return { ...outcomeLabels(labels), reply: passThrough(result.answer) };
    }
    // A write the legacy may have taken is not done again here: the client is told it failed.
    const mayAnswer = !known.writes || !result.reached;
    if (!this.#failover.failed(mayAnswer)) return { ...outcomeLabels(labels), reply: BAD_GATEWAY };
    return answer(dispatcher, ex, known);
  }

  /** Ours in the background, from the same read: the reply read whole (a streamed list too); null if it cannot be compared. */
  private ours(dryRun: Dispatcher, ex: HttpExchange, known: Known): Promise<Captured | null> {
    let pending: Outcome | Promise<Outcome>;
    try {
      pending = answer(dryRun, ex, known);
    } catch {
      return Promise.resolve(null);
    }
    return Promise.resolve(pending).then(
      (outcome) => captureReply(outcome.reply, this.parts.settings.maxAnswerBytes).catch(() => null),
      () => null,
    );
  }

  /**
   * Legacy mode's own request to the legacy, unless it is known not to answer (Failover: a quiet
   * spell); what it got told to the fail-over with who sent it and what it asked.
   */
  private async forwardOwn(ex: HttpExchange, known: Known, body: Buffer | null): Promise<LegacyResult> {
    if (this.#failover.forwarding() === 'not-forwarded') return NOT_FORWARDED;
    let result: LegacyResult | null = null;
    try {
      result = await this.send(ex, known, body, false);
      return result;
    } finally {
      this.#failover.forwarded({ client: ex.client, operation: known.operation?.name ?? null }, result);
    }
  }

  private async send(ex: HttpExchange, known: Known, body: Buffer | null, copy: boolean): Promise<LegacyResult> {
    const result = await this.parts.legacy.send(this.forwardOf(ex, known, body, copy));
    this.parts.recorder.legacyAnswered(result.ok ? result.answer.seconds : result.seconds, result.ok);
    return result;
  }

  /** The request as the legacy gets it; a `copy` (compare mode, a recheck) says so in X-Shadow-Copy. */
  private forwardOf(ex: HttpExchange, known: Known, body: Buffer | null, copy: boolean): ForwardRequest {
    return {
      method: ex.method,
      // Appended to SIS_LEGACY_URL: the target below SIS_BASE_PATH.
      relativeUrl: ex.url.slice(this.parts.basePath.length),
      // A valid traceparent of the caller's goes on; while tracing, the legacy call is a child of our span.
      rawHeaders: ex.onwardHeaders,
      body,
      clientAddress: ex.peerAddress,
      write: known.writes,
      copy,
    };
  }

  private jobOf(
    ex: HttpExchange,
    known: Known,
    labels: Labels,
    body: Buffer | null,
    ours: Captured | null,
    copy: boolean,
  ): ComparisonJob {
    return {
      labels: { service: labels.service, operation: labels.operation, binding: labels.binding },
      forward: this.forwardOf(ex, known, body, copy),
      url: ex.url,
      ours,
      metadata: labels.binding === 'metadata',
      personal: personalOfKnown(known),
    };
  }

  /** Legacy mode: the legacy's answer in hand, ours judged against it here (comparison.ts). */
  private async record(
    ex: HttpExchange,
    known: Known,
    labels: Labels,
    body: Buffer | null,
    result: LegacyResult,
    ours: Captured | null,
  ): Promise<void> {
    const job = this.jobOf(ex, known, labels, body, ours, false);
    const { judgement } = await compareWithLegacy(
      job,
      this.parts.rules(),
      async (forward) => {
        const again = await this.parts.legacy.send(forward);
        this.parts.recorder.legacyAnswered(again.ok ? again.answer.seconds : again.seconds, again.ok);
        return again;
      },
      result,
    );
    this.apply(labels, judgement);
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

/** What the route and the read say: the operation ASMX would run, and whether the request may write. */
function known(route: Route, read: Read): Known {
  const operation = operationOf(route, read);
  return { route, read, operation, writes: operation === null || operation.writes === true };
}

/** The request answered by `dispatcher` (ours, or the dry run) on what is known of it: its route and its read. */
function answer(dispatcher: Dispatcher, ex: HttpExchange, known: Known): Outcome | Promise<Outcome> {
  const { route, read } = known;
  if (route === null) return dispatcher.dispatch(ex);
  return read === null ? dispatcher.dispatchRoute(ex, route) : dispatcher.answerRead(ex, route, read);
}

/** The personal data of the request, by what its binding read (mask.ts). */
function personalOfKnown(known: Known): Personal | null {
  const { route, read, operation } = known;
  if (route === null) return null;
  const args = read?.error === undefined ? read?.call.args : undefined;
  return personalOf(operation, args, route.service.service.operations);
}

/** Compare mode: our answer's labels, the very ones the metrics and the access log get. */
function labelsOf(outcome: Outcome, known: Known): Labels {
  return {
    service: outcome.service ?? known.route?.service.name ?? null,
    operation: outcome.operation ?? known.operation?.name ?? null,
    binding: outcome.binding ?? 'metadata',
    mode: 'compare',
  };
}

/** Legacy mode: the labels ours would get (the client's answer is the legacy's, labelled as ASMX routes it). */
function knownLabels(known: Known): Labels {
  const { route, read } = known;
  return {
    service: route?.service.name ?? null,
    operation: known.operation?.name ?? null,
    binding: read?.binding.name ?? route?.binding?.name ?? 'metadata',
    mode: 'legacy',
  };
}

/** The labels the request log and metrics get for an answer the legacy service gave. */
function outcomeLabels(labels: Labels): Omit<Outcome, 'reply'> {
  return {
    service: labels.service ?? undefined,
    operation: labels.operation ?? undefined,
    binding: labels.binding === 'metadata' ? undefined : labels.binding,
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
