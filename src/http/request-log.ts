import type { Outcome } from '../bindings/types.js';
import { fixedInfoLine } from '../logging/fixed-line.js';
import type { FixedLine } from '../logging/fixed-line.js';
import type { Logger } from '../logging/logger.js';
import { redactUrl } from '../logging/redact.js';
import { RouteTree } from '../observe/route-tree.js';
import { databaseCondition } from '../store/db-errors.js';
import type { ReplyEnd } from './write-reply.js';

/** What a request line needs of the exchange. */
export interface LoggedRequest {
  readonly requestId: string;
  readonly method: string;
  readonly url: string;
  /** The client the request counts as (clientKey): an IPv4 address, or an IPv6 prefix. */
  readonly client: string;
  /** The W3C trace id, when the request is part of a trace. */
  readonly traceId?: string | undefined;
}

/**
 * The access log: one line per answered request, written once the answer is sent (or cut).
 * Failures, cut streams and answers of 400 and above are always written; successful answers one
 * in `successSample` (1: all, 0: none), an operator's choice of volume.
 *
 * The fields known from the route (service, operation, binding) are bound once per route in a
 * pino child, whose bindings pino serializes once; a successful request's line is then written
 * as pino would write it (fixedInfoLine), its four own fields only. Routes are keyed by the
 * contract's names, never by what a request spelled, so there are at most services × operations
 * × bindings of them.
 */
export class RequestLog {
  /** Each route's line, made on its first request. */
  readonly #lines: RouteTree<FixedLine>;
  #successes = 0;

  constructor(
    private readonly log: Logger,
    private readonly successSample: number,
  ) {
    this.#lines = new RouteTree((service, operation, binding) =>
      fixedInfoLine(
        log.child({ service, operation: operation || undefined, binding: binding || undefined }),
        'request',
      ),
    );
  }

  write(req: LoggedRequest, outcome: Outcome, seconds: number, end: ReplyEnd): void {
    const { log } = this;
    if (outcome.cause !== undefined) {
      // A database that is down, full or read-only is logged once, as a state change
      // (observe/database-watch.ts); each request it fails is an ordinary request line.
      const database = databaseCondition(outcome.cause);
      if (database === null) log.error({ ...entry(req, outcome, seconds), err: outcome.cause }, 'operation failed');
      else if (log.isLevelEnabled('info')) log.info({ ...entry(req, outcome, seconds), database }, 'request');
    } else if (end.kind === 'failed') {
      log.error({ ...entry(req, outcome, seconds), err: end.error }, 'streamed answer failed midway; connection cut');
    } else if (end.kind !== 'sent') {
      log.warn(
        { ...entry(req, outcome, seconds), end: end.kind },
        'streamed answer not taken to its end; connection cut',
      );
    } else if (log.isLevelEnabled('info') && this.sampled(outcome.reply.status)) {
      if (outcome.service === undefined) log.info(entry(req, outcome, seconds), 'request');
      else
        this.#lines.get(
          outcome.service,
          outcome.operation ?? '',
          outcome.binding ?? '',
        )(
          `,"requestId":${JSON.stringify(req.requestId)},"method":${JSON.stringify(req.method)},"client":${JSON.stringify(req.client)},"status":${outcome.reply.status},"ms":${ms(seconds)}${traced(req.traceId)}`,
        );
    }
  }

  private sampled(status: number): boolean {
    if (status >= 400 || this.successSample === 1) return true;
    return this.successSample !== 0 && ++this.#successes % this.successSample === 0;
  }
}

const ms = (seconds: number): number => Math.round(seconds * 1e6) / 1000;

/** The trace id field, or nothing (a trace id is 32 hex digits: safe in JSON as it is). */
const traced = (traceId: string | undefined): string => (traceId === undefined ? '' : `,"traceId":"${traceId}"`);

/** A whole line's fields; requests that named no service file carry their path (never query values). */
function entry(req: LoggedRequest, outcome: Outcome, seconds: number): Record<string, unknown> {
  return {
    requestId: req.requestId,
    method: req.method,
    client: req.client,
    service: outcome.service,
    operation: outcome.operation,
    binding: outcome.binding,
    status: outcome.reply.status,
    ms: ms(seconds),
    path: outcome.service === undefined ? redactUrl(req.url) : undefined,
    traceId: req.traceId,
  };
}
