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
 * AuthCode (a write) is never sent twice: not replayed in `compare`, only validated in `legacy`.
 */
import { withTraceparent } from '../observe/trace-context.js';
import type { Dispatcher } from '../bindings/dispatch.js';
import type { Outcome } from '../bindings/exchange.js';
import type { Reply } from '../reply/reply.js';
import type { ShadowSettings } from '../config/config.js';
import type { HttpExchange } from '../http/http-exchange.js';
import type { Logger } from '../logging/logger.js';
import type { Captured } from './capture.js';
import { captureReply, teeReply } from './capture.js';
import type { Comparer } from './comparer.js';
import { Failover } from './failover.js';
import type { Judgement } from './judge.js';
import { judge } from './judge.js';
import type { ForwardRequest, LegacyClient, LegacyResult } from './legacy-client.js';
import type { ShadowRecorder } from './recorder.js';
import type { RequestShape, ServiceFile } from './request-shape.js';
import { shapeOf } from './request-shape.js';
import { passThrough } from './pass-through.js';

export interface ShadowParts {
  readonly settings: ShadowSettings;
  readonly basePath: string;
  readonly files: ReadonlyMap<string, ServiceFile>;
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
  /** Told of each fail-over (the metric). */
  readonly failedOver?: (answer: 'ours' | 'bad-gateway') => void;
  /** Whether this request is compared (SIS_SHADOW_SAMPLE); injectable for tests. */
  readonly sampled?: () => boolean;
}

/** Labels of one comparison: ours where our answer says, else what the path says. */
interface Labels {
  readonly service: string | null;
  readonly operation: string | null;
  readonly binding: string;
}

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
    this.#failover = new Failover(parts.log, parts.settings.fallback, parts.failedOver);
  }

  /** Comparisons in progress (for tests and the benchmark). */
  get inFlight(): number {
    return this.#inFlight;
  }

  dispatch(ex: HttpExchange): Outcome | Promise<Outcome> {
    const shape = shapeOf(ex, this.parts.basePath, this.parts.files);
    if (shape === null) return this.parts.dispatcher.dispatch(ex);
    return this.parts.settings.mode === 'legacy' ? this.legacyAnswers(ex, shape) : this.compare(ex, shape);
  }

  /** A comparison may start: sampled, and under the in-flight cap. Counted `skipped` otherwise. */
  private admit(labels: Labels): boolean {
    if (this.#sampled() && this.#inFlight < this.parts.settings.maxInFlight) {
      this.#inFlight++;
      return true;
    }
    this.parts.recorder.count(labels.service, labels.operation, labels.binding, 'skipped');
    return false;
  }

  private compare(ex: HttpExchange, shape: RequestShape): Outcome | Promise<Outcome> {
    const { dispatcher, recorder } = this.parts;
    if (shape.write) {
      recorder.count(shape.service, shape.operation, shape.binding, 'skipped');
      return dispatcher.dispatch(ex);
    }
    if (!this.admit(shape)) return dispatcher.dispatch(ex);
    if (this.parts.comparer.paused()) {
      // A legacy refusing connections: each comparison would fail at once, so none is sent.
      this.#inFlight--;
      return counted(dispatcher.dispatch(ex), (outcome) => this.apply(labelsOf(outcome, shape), LEGACY_REFUSING));
    }
    // Read once, for both: our dispatcher and the copy for the legacy service get the same bytes.
    const body = shape.hasBody ? bodyOf(ex) : Promise.resolve(null);
    body.catch(() => undefined);
    return Promise.resolve(dispatcher.dispatch(ex)).then(
      (outcome) => {
        const { reply, captured } = teeReply(outcome.reply, this.parts.settings.maxAnswerBytes);
        this.replay(ex, shape, outcome, body, captured)
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
    shape: RequestShape,
    outcome: Outcome,
    bodyRead: Promise<Buffer | null>,
    captured: Promise<Captured | null>,
  ): Promise<void> {
    const labels = labelsOf(outcome, shape);
    const body = await bodyRead.catch(() => undefined);
    const ours = await captured;
    // A body we refused, or an answer too large to compare: the legacy service is not asked.
    if (body === undefined || ours === null)
      return this.parts.recorder.count(labels.service, labels.operation, labels.binding, 'skipped');
    const verdict = await this.parts.comparer.compare({
      forward: this.forwardOf(ex, shape, body),
      url: ex.url,
      ours,
      metadata: labels.binding === 'metadata',
      personal: this.personal(labels.service),
    });
    this.parts.recorder.legacyAnswered(verdict.seconds);
    this.apply(labels, verdict.judgement);
  }

  private async legacyAnswers(ex: HttpExchange, shape: RequestShape): Promise<Outcome> {
    const { dispatcher, dryRun } = this.parts;
    let body: Buffer | null = null;
    try {
      body = shape.hasBody ? await ex.readBody() : null;
    } catch {
      // Refused (too large) or cut: ours answers that, as it would alone; the legacy is not asked.
      this.parts.recorder.count(shape.service, shape.operation, shape.binding, 'skipped');
      return dispatcher.dispatch(ex);
    }
    const compared = this.admit(shape);
    const ours = compared ? this.ours(dryRun, ex) : null;
    const result = await this.send(ex, shape, body);
    if (ours !== null) {
      ours
        .then(({ outcome, captured }) => this.record(ex, body, labelsOf(outcome, shape), result, captured))
        .catch((err: unknown) => this.parts.log.error({ err }, 'shadow: a comparison failed'))
        .finally(() => this.#inFlight--);
    } else if (!result.ok) {
      this.parts.recorder.count(shape.service, shape.operation, shape.binding, 'legacy-failed');
    }
    if (result.ok) {
      this.#failover.answered();
      return { ...outcomeLabels(shape), reply: passThrough(result.answer) };
    }
    // A write the legacy may have taken is not done again here: the client is told it failed.
    const mayAnswer = !shape.write || !result.reached;
    if (!this.#failover.failed(result, mayAnswer)) return { ...outcomeLabels(shape), reply: BAD_GATEWAY };
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

  private async send(ex: HttpExchange, shape: RequestShape, body: Buffer | null): Promise<LegacyResult> {
    const result = await this.parts.legacy.send(this.forwardOf(ex, shape, body));
    this.parts.recorder.legacyAnswered(result.ok ? result.answer.seconds : result.seconds);
    return result;
  }

  private forwardOf(ex: HttpExchange, shape: RequestShape, body: Buffer | null): ForwardRequest {
    return {
      method: ex.method,
      relativeUrl: shape.relativeUrl,
      // The caller's traceparent goes on as it came; while tracing, the legacy call is a child of our span.
      rawHeaders: ex.span === null ? ex.rawHeaders : withTraceparent(ex.rawHeaders, ex.span.traceparent),
      body,
      clientAddress: ex.peerAddress,
      write: shape.write,
    };
  }

  /** The file of a write (AuthCode): its phones and codes are masked in what is kept. */
  private personal(service: string | null): boolean {
    return service !== null && this.parts.files.get(service.toLowerCase())?.writes === true;
  }

  /** Legacy mode: our answer, computed here, judged here. */
  private record(
    ex: HttpExchange,
    body: Buffer | null,
    labels: Labels,
    result: LegacyResult,
    ours: Captured | null,
  ): void {
    const request = { method: ex.method, url: ex.url, rawHeaders: ex.rawHeaders, body };
    const metadata = labels.binding === 'metadata';
    this.apply(labels, judge(result, { request, ours, metadata, personal: this.personal(labels.service) }));
  }

  private apply(labels: Labels, judgement: Judgement): void {
    const { service, operation, binding } = labels;
    const { result, kind, example } = judgement;
    if (result !== 'different' || kind === null || example === null)
      return this.parts.recorder.count(service, operation, binding, result);
    this.parts.recorder.different({ service, operation, binding, kind }, () => example);
  }
}

function labelsOf(outcome: Outcome | null, shape: RequestShape): Labels {
  return {
    service: outcome?.service ?? shape.service,
    operation: outcome?.operation ?? shape.operation,
    binding: shape.binding === 'metadata' ? 'metadata' : (outcome?.binding ?? shape.binding),
  };
}

/** The labels the request log and metrics get for an answer the legacy service gave. */
function outcomeLabels(shape: RequestShape): Omit<Outcome, 'reply'> {
  return {
    ...(shape.service === null ? {} : { service: shape.service }),
    ...(shape.operation === null ? {} : { operation: shape.operation }),
    ...(shape.binding === 'metadata' ? {} : { binding: shape.binding }),
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
