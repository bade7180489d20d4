import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Gate } from '../access/gate.js';
import { INTERNAL_ERROR, ONE_HOST, refusalReply } from '../bindings/replies.js';
import type { Outcome } from '../bindings/types.js';
import type { Refusal } from '../bindings/types.js';
import type { Config } from '../config/config.js';
import { RequestTooLargeError } from '../errors/errors.js';
import type { Logger } from '../logging/logger.js';
import type { RequestMetrics } from '../observe/metrics.js';
import { opsPath, sendText } from '../observe/ops-endpoints.js';
import type { OpsEndpoints } from '../observe/ops-endpoints.js';
import type { Tracing } from '../observe/trace-context.js';
import { RECEIPT_MAX_BYTES } from '../outbox/delivery-receipts.js';
import type { CheckedReport, DeliveryReceipts, ReceiptAnswer } from '../outbox/delivery-receipts.js';
import type { ProviderReceipts } from '../outbox/provider-receipts.js';
import { isStreamed } from '../reply/reply.js';
import { readBody } from './body.js';
import { HttpExchange } from './http-exchange.js';
import type { ReportBrake } from './report-brake.js';
import { RequestLog } from './request-log.js';
import { writeReply } from './write-reply.js';
import type { ReplyEnd } from './write-reply.js';

/** What the server shares with the shutdown: once draining, every answer closes its connection. */
export interface ServerState {
  draining: boolean;
}

/**
 * What answers a request: the Dispatcher, or something at the same seam around it (the shadow
 * beside the legacy service, src/shadow), given the HTTP exchange itself.
 */
export interface Answerer {
  dispatch(ex: HttpExchange): Outcome | Promise<Outcome>;
}

/** The production parts around dispatch; each is optional so a bare server stays possible. */
export interface ServerHooks {
  readonly state?: ServerState;
  readonly metrics?: RequestMetrics;
  /** Access rules and rate limits, run before dispatch; null or disabled = skipped. */
  readonly gate?: Gate | null;
  readonly ops?: OpsEndpoints;
  /** The SMS gateway's delivery receipts, at their own path (SIS_SMS_RECEIPT_PATH); null = none. */
  readonly receipts?: DeliveryReceipts | null;
  /** Delivery reports in the providers' formats, at SIS_SMS_RECEIPT_PATH/<gateway>; null = none. */
  readonly providerReceipts?: ProviderReceipts | null;
  /** Counts refused reports (both kinds above) and brakes an address that keeps failing their check. */
  readonly reportBrake?: ReportBrake | null;
  /** A span per request, sent over OTLP; absent unless OTEL_EXPORTER_OTLP_ENDPOINT is set. */
  readonly tracing?: Tracing | null;
}

const SENT: ReplyEnd = { kind: 'sent' };

/** A delivery report checked, with the headers its answer needs. */
type Checked = CheckedReport & { readonly headers: [string, string][] };

/**
 * One request's way through the service: the ops endpoints (health, metrics) answer for
 * themselves; every other request passes the gate (when access rules or limits are set), is
 * dispatched, and its Outcome written, counted and logged in `finish`, the one place every
 * answered request passes.
 */
export class RequestHandler {
  readonly #bootId = randomBytes(4).toString('hex');
  #counter = 0;
  readonly #state: ServerState;
  readonly #gate: Gate | null;
  readonly #workerPid: string | null;
  readonly #requestLog: RequestLog;
  readonly #tracing: Tracing | null;

  constructor(
    private readonly config: Config,
    private readonly dispatcher: Answerer,
    private readonly log: Logger,
    private readonly hooks: ServerHooks = {},
  ) {
    this.#state = hooks.state ?? { draining: false };
    this.#gate = hooks.gate?.enabled === true ? hooks.gate : null;
    this.#workerPid = config.debugHeaders ? String(process.pid) : null;
    this.#requestLog = new RequestLog(log, config.logSuccessSample);
    this.#tracing = hooks.tracing ?? null;
  }

  /** The node:http 'request' listener (bound: pass it as it is). */
  readonly handle = (req: IncomingMessage, res: ServerResponse): void => {
    const ex = new HttpExchange(req, this.config, `${this.#bootId}-${(++this.#counter).toString(36)}`);
    const { ops, metrics, receipts, providerReceipts } = this.hooks;
    if (hostLines(req.rawHeaders) > 1) {
      // RFC 9112 3.2: which Host would name the service in a WSDL, or key a balancer's routing?
      if (metrics !== undefined) metrics.inFlight++;
      this.finish(ex, res, { reply: ONE_HOST }, true);
      return;
    }
    if (receipts != null && onPath(ex.url, receipts.path)) {
      void this.braked(req, res, ex, 'webhook', () => this.receipt(req, receipts, ex.requestId));
      return;
    }
    const gateway = providerReceipts?.gatewayOf(ex.url) ?? null;
    if (gateway !== null) {
      void this.braked(req, res, ex, gateway, () =>
        this.providerReceipt(req, providerReceipts!, gateway, ex.url, ex.requestId),
      );
      return;
    }
    if (ops !== undefined) {
      const path = opsPath(ex.url);
      if (path !== null) {
        if (this.#state.draining) res.setHeader('Connection', 'close');
        if (this.#workerPid !== null) res.setHeader('X-Sis-Worker-Pid', this.#workerPid);
        void ops.answer(path, req, res, ex.requestId);
        return;
      }
    }
    if (metrics !== undefined) metrics.inFlight++;
    if (this.#tracing !== null) ex.span = this.#tracing.start(ex.method, ex.traceparent, ex.started);
    if (this.#gate === null) this.admit(ex, res);
    else void this.gated(ex, res, this.#gate);
  };

  /**
   * What the service answers to an exchange, without touching a socket: dispatch, and a failure
   * of ours turned into a 500 (logged). The gate is not asked. The seam for running a request
   * in-process (a replay, a comparison with the legacy service); never rejects.
   */
  async outcome(ex: HttpExchange): Promise<Outcome> {
    try {
      const pending = this.dispatcher.dispatch(ex);
      return pending instanceof Promise ? await pending : pending;
    } catch (err) {
      return this.failure(ex, err);
    }
  }

  /**
   * A delivery report of `gateway` (ours or a provider's): like the ops endpoints it passes no gate
   * (its signature or token is its key) and is not counted per operation. The report brake answers
   * it 429 unread while its client is known braked; otherwise it is checked, then weighed by the
   * brake in one step (a failed check counted), and answered 429 unrecorded if braked.
   */
  private async braked(
    req: IncomingMessage,
    res: ServerResponse,
    ex: HttpExchange,
    gateway: string,
    check: () => Promise<Checked>,
  ): Promise<void> {
    const brake = this.hooks.reportBrake ?? null;
    // What the brake counts by: the client (src/address/client-network.ts), not the spelling.
    const keys = brake?.keysOf(gateway, ex.client, ex.site) ?? null;
    let wait = brake === null || keys === null ? 0 : brake.waitOf(keys);
    let answer: ReceiptAnswer | undefined;
    let headers: [string, string][] = [];
    if (wait === 0) {
      const checked = await check();
      headers = checked.headers;
      if (brake !== null && keys !== null) wait = await brake.weigh(keys, 'failed' in checked && checked.failed);
      if (wait === 0)
        answer = 'record' in checked ? await this.recorded(checked.record, gateway, ex.requestId) : checked.answer;
    }
    if (answer === undefined) {
      answer = { status: 429, text: 'too many refused reports from this address; try again later' };
      headers = [
        ['Retry-After', String(Math.ceil(wait / 1000))],
        ['Connection', 'close'],
      ];
    }
    brake?.answered(gateway, answer.status);
    sendText(res, req, answer.status, 'text/plain; charset=utf-8', `${answer.text}\n`, ex.requestId, headers);
  }

  /** A genuine report recorded; a failure of ours is a 500, and the sender is asked to send it again. */
  private async recorded(
    record: () => Promise<ReceiptAnswer>,
    gateway: string,
    requestId: string,
  ): Promise<ReceiptAnswer> {
    try {
      return await record();
    } catch (err) {
      this.log.error({ err, requestId, gateway }, 'outbox: delivery report not recorded');
      return { status: 500, text: 'report not recorded; send it again' };
    }
  }

  /** A delivery receipt in our format: POST only, a small body, checked by DeliveryReceipts. */
  private async receipt(req: IncomingMessage, receipts: DeliveryReceipts, requestId: string): Promise<Checked> {
    if (req.method !== 'POST')
      return {
        failed: false,
        answer: { status: 405, text: 'a delivery receipt is a POST' },
        headers: [['Allow', 'POST']],
      };
    try {
      const body = await readBody(req, RECEIPT_MAX_BYTES);
      const header = req.headers['x-signature-256'];
      return { ...receipts.check(Array.isArray(header) ? header[0] : header, body), headers: [] };
    } catch (err) {
      return this.unread(err, requestId, 'webhook', `a delivery receipt is at most ${RECEIPT_MAX_BYTES} bytes`);
    }
  }

  /**
   * A provider's delivery report (GET for Kannel's dlr-url and Vonage's GET receipts, else POST):
   * like ours, checked by its provider's signature or token.
   */
  private async providerReceipt(
    req: IncomingMessage,
    receipts: ProviderReceipts,
    gateway: string,
    url: string,
    requestId: string,
  ): Promise<Checked> {
    const method = req.method ?? '';
    if (method !== 'POST' && method !== 'GET')
      return {
        failed: false,
        answer: { status: 405, text: 'a delivery report is a GET or a POST' },
        headers: [['Allow', 'GET, POST']],
      };
    try {
      const body = method === 'POST' ? await readBody(req, RECEIPT_MAX_BYTES) : Buffer.alloc(0);
      return { ...receipts.check(gateway, { method, url, headers: req.headers, body }), headers: [] };
    } catch (err) {
      return this.unread(err, requestId, gateway, `a delivery report is at most ${RECEIPT_MAX_BYTES} bytes`);
    }
  }

  /** A report whose body could not be read: too large (413), or a failure of ours (500). */
  private unread(err: unknown, requestId: string, gateway: string, tooLarge: string): Checked {
    if (err instanceof RequestTooLargeError)
      return { failed: false, answer: { status: 413, text: tooLarge }, headers: [['Connection', 'close']] };
    this.log.error({ err, requestId, gateway }, 'outbox: delivery report not recorded');
    return { failed: false, answer: { status: 500, text: 'report not recorded; send it again' }, headers: [] };
  }

  /** A body of known length is read first (see HttpExchange.collectBody), then the request served. */
  private admit(ex: HttpExchange, res: ServerResponse): void {
    if (!ex.collectBody(() => this.serve(ex, res))) this.serve(ex, res);
  }

  /** `outcome`, then the answer written: at once when dispatch answers at once, else when it settles. */
  private serve(ex: HttpExchange, res: ServerResponse): void {
    let pending: Outcome | Promise<Outcome>;
    try {
      pending = this.dispatcher.dispatch(ex);
    } catch (err) {
      pending = this.failure(ex, err);
    }
    if (!(pending instanceof Promise)) return this.finish(ex, res, pending, ex.bodyRefused);
    pending.then(
      (outcome) => this.finish(ex, res, outcome, ex.bodyRefused),
      (err: unknown) => this.finish(ex, res, this.failure(ex, err), ex.bodyRefused),
    );
  }

  private failure(ex: { readonly requestId: string }, err: unknown): Outcome {
    this.log.error({ err, requestId: ex.requestId }, 'unexpected failure while answering');
    return { reply: INTERNAL_ERROR };
  }

  /** The gate first (access rules, rate limits); an access check that fails lets the request through, logged. */
  private async gated(ex: HttpExchange, res: ServerResponse, gate: Gate): Promise<void> {
    let refusal: Refusal | null;
    try {
      const verdict = gate.check(ex);
      if (verdict instanceof Promise) {
        const from = performance.now();
        refusal = await verdict;
        // Part of a read's budget for its dependencies (SIS_STALE_AFTER_MS).
        ex.waitedMs = performance.now() - from;
      } else refusal = verdict;
    } catch (err) {
      this.log.error({ err, requestId: ex.requestId }, 'access check failed');
      refusal = null;
    }
    if (refusal === null) return this.admit(ex, res);
    const service = gate.serviceName(ex.target);
    // The body was not read: the connection cannot carry another request after this answer.
    this.finish(ex, res, { ...(service === null ? {} : { service }), reply: refusalReply(refusal) }, ex.hasBody);
  }

  /** Writes the outcome; once it is sent, counts and logs it. */
  private finish(ex: HttpExchange, res: ServerResponse, outcome: Outcome, closeAfter: boolean): void {
    const extras = {
      requestId: ex.requestId,
      workerPid: this.#workerPid,
      closeAfter: closeAfter || this.#state.draining,
    };
    if (isStreamed(outcome.reply.body)) {
      // A streamed list ends later, and perhaps cut short: its time and fate are known only then.
      writeReply(res, outcome.reply, { ...extras, onEnd: (end) => this.done(ex, outcome, end) });
      return;
    }
    writeReply(res, outcome.reply, extras);
    this.done(ex, outcome, SENT);
  }

  private done(ex: HttpExchange, outcome: Outcome, end: ReplyEnd): void {
    const seconds = (performance.now() - ex.started) / 1000;
    const { metrics } = this.hooks;
    if (metrics !== undefined) {
      metrics.inFlight--;
      metrics.observe(outcome.service, outcome.operation, outcome.binding, outcome.reply.status, seconds);
    }
    this.#requestLog.write(ex, outcome, seconds, end);
    ex.span?.end(outcome.service, outcome.operation, outcome.binding, outcome.reply.status);
  }
}

/** How many Host header lines a request has (node:http keeps only the first in `headers`). */
function hostLines(raw: readonly string[]): number {
  let count = 0;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    if (name.length === 4 && name.toLowerCase() === 'host') count++;
  }
  return count;
}

/** Whether a request target names `path` (its query aside). */
function onPath(url: string, path: string): boolean {
  return url.startsWith(path) && (url.length === path.length || url.charCodeAt(path.length) === 63); /* ? */
}
