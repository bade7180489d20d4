import type { Config } from '../config/config.js';
import type { ResultValue } from '../contract/types.js';
import { InvalidArgumentError, OperationFailedError, ServiceError } from '../errors/errors.js';
import type { Caller, OperationContext } from '../operations/context.js';
import type { Service } from '../operations/index.js';
import type { Reply } from '../reply/reply.js';
import { AnswerCache, answerKey } from './answer-cache.js';
import type { Kept } from './answer-cache.js';
import type { MetadataEndpoint } from './metadata-endpoint.js';
import { METHOD_NOT_ALLOWED, NO_SUCH_DESCRIPTION, NOT_FOUND, unrecognizedFormat } from './replies.js';
import { buildRouteSets, findRoute } from './route.js';
import type { RouteSets } from './route.js';
import { buildRouteTable } from './service-routes.js';
import { StaleAnswers } from './stale-answers.js';
import { StaleDeadline } from './stale-deadline.js';
import type { Binding, Call, Exchange, Outcome, Read, Route, ServiceRoutes } from './types.js';

/** Safe words for an operation failure: the cause (SQL, paths, stacks) only goes to the log. */
export const OPERATION_FAILED = 'The service could not complete the request. The error has been logged.';

/**
 * Routes a request as ASMX does (route.ts), then runs it through one Binding: the `.asmx` file
 * (case-insensitive), then the verb and path shape picks the protocol: SOAP (POST /X.asmx), HTTP
 * GET and POST (/X.asmx/Op), service description (GET /X.asmx?WSDL, ?disco) or help pages
 * (GET /X.asmx[?op=Op]). What is answered before a binding is chosen comes from replies.ts.
 */
export class Dispatcher {
  private readonly routes: RouteSets;
  /** Kept answers of cacheable operations; null when SIS_ANSWER_CACHE_BYTES is 0. */
  readonly cache: AnswerCache | null;
  /** Reads' last answers, served while the database does not answer; null when off (SIS_STALE_IF_ERROR_MS=0) or not asked for. */
  readonly stale: StaleAnswers | null;

  constructor(
    services: readonly Service[],
    private readonly config: Config,
    private readonly context: OperationContext,
    private readonly metadata: MetadataEndpoint,
    /** The service's own dispatcher (not the shadow's dry run or replay): keeps reads' answers for when the database does not answer. */
    keepStale = false,
  ) {
    const envelope = { maxDepth: config.maxXmlDepth, maxAttributes: 256, maxParams: 1024 };
    this.routes = buildRouteSets(
      buildRouteTable(services, config.namespace, { envelope, maxFormFields: config.maxFormFields }),
    );
    this.cache = config.answerCacheBytes > 0 ? new AnswerCache(config.answerCacheBytes) : null;
    this.stale =
      !keepStale || config.staleIfErrorMs === 0 || config.staleAnswersBytes === 0
        ? null
        : new StaleAnswers({
            maxAgeMs: config.staleIfErrorMs,
            maxBytes: config.staleAnswersBytes,
            seen: this.cache?.seen,
          });
  }

  /**
   * The request's outcome: at once when no operation runs, else once it has. Throws or rejects
   * only on a failure of ours (the caller answers 500).
   */
  dispatch(ex: Exchange): Outcome | Promise<Outcome> {
    const route = findRoute(ex, this.routes);
    return route === null ? { reply: NOT_FOUND } : this.dispatchRoute(ex, route);
  }

  /** Where the request goes (route.ts), for an owner that looks before dispatch (the shadow). */
  route(ex: Exchange): Route | null {
    return findRoute(ex, this.routes);
  }

  /** The request on the route its owner found for it (`route`). */
  dispatchRoute(ex: Exchange, route: Route): Outcome | Promise<Outcome> {
    const routes = route.service;
    switch (route.kind) {
      case 'call':
        return this.run(ex, route);
      case 'describe':
        return this.describe(ex, routes);
      case 'method-not-allowed':
        return { service: routes.name, reply: METHOD_NOT_ALLOWED };
      default:
        return { service: routes.name, reply: unrecognizedFormat(ex.target!.opPath ?? '') };
    }
  }

  /**
   * A `call` route's request read by its binding, once, with its body when the binding reads one:
   * for an owner that must know the operation before anyone answers (the shadow: SOAP names it
   * in the body), and then has it answered by `answerRead` (this dispatcher's or another's).
   */
  read(ex: Exchange, route: Route): Read | Promise<Read> {
    const binding = route.binding!;
    const routes = route.service;
    if (!route.wantsBody) return binding.read(ex, routes, null);
    let body: Buffer | Promise<Buffer>;
    try {
      body = ex.readBody();
    } catch (err) {
      return bodyRefused(err, route);
    }
    if (!(body instanceof Promise)) return binding.read(ex, routes, body);
    return body.then(
      (whole) => binding.read(ex, routes, whole),
      (err: unknown) => bodyRefused(err, route),
    );
  }

  /** A request read by `read` (of any dispatcher over the same services), answered here. */
  answerRead(ex: Exchange, route: Route, read: Read): Outcome | Promise<Outcome> {
    return this.call(ex, route.service, read);
  }

  /**
   * Reads the call (with the body, for a binding that reads one), answers it from the cache or
   * runs it, and has the binding write the result or the error. Each step that can answer at once
   * (a body already read, SQLite's reads, the cache's version) does: a request whose steps all do
   * is answered without a promise, as the necessary work would be; a step that cannot is continued
   * when it settles.
   */
  private run(ex: Exchange, route: Route): Outcome | Promise<Outcome> {
    const read = this.read(ex, route);
    if (read instanceof Promise) return read.then((whole) => this.call(ex, route.service, whole));
    return this.call(ex, route.service, read);
  }

  private call(ex: Exchange, routes: ServiceRoutes, read: Read): Outcome | Promise<Outcome> {
    const { binding } = read;
    if (read.error !== undefined)
      return {
        service: routes.name,
        binding: binding.name,
        operation: read.operation,
        reply: binding.fail(read.error),
      };
    const { call } = read;
    const lookUp = this.cached(binding, call);
    if (lookUp instanceof Promise) {
      // The data version is read from the database: the budget covers that wait too.
      const deadline = this.deadline(ex, routes, binding, call, null);
      const pending = lookUp.then((kept) => this.answer(ex, routes, binding, call, kept, deadline));
      return deadline === null ? pending : deadline.first(pending);
    }
    return this.answer(ex, routes, binding, call, lookUp);
  }

  /**
   * `deadline`: the budget's, when the data version was read from the database (null: it had no
   * stale answer); undefined when nothing waited yet (one is made if the call does not answer at once).
   */
  private answer(
    ex: Exchange,
    routes: ServiceRoutes,
    binding: Binding,
    call: Call,
    kept: Kept | null,
    deadline?: StaleDeadline | null,
  ): Outcome | Promise<Outcome> {
    const operation = call.op.name;
    if (kept?.reply !== undefined) {
      // Asked again: counts for the stale answer's askers as if it had been made again (kept again if it left).
      const site = this.stale === null ? null : ex.site;
      if (this.stale !== null && !this.stale.asked(kept.key, ex.client, site))
        this.stale.keep(kept.key, kept.reply, kept.version, ex.client, site);
      return { service: routes.name, binding: binding.name, operation, reply: kept.reply };
    }
    let racing = deadline;
    const written = (value: ResultValue): Outcome => {
      const reply = binding.write(routes.writers.get(call.op)!, value);
      if (call.op.writes === true && this.context.dryRun !== true) this.context.onWritten?.();
      if (kept !== null) this.cache?.set(kept.key, kept.version, reply);
      if (this.stale !== null && call.op.writes !== true) {
        const key = kept?.key ?? answerKey(binding.name, call);
        // Kept for the caller's client (address/client-network.ts), not its address's spelling.
        if (key !== null) this.stale.keep(key, reply, kept?.version ?? null, ex.client, ex.site);
      }
      return { service: routes.name, binding: binding.name, operation, reply };
    };
    const failed = (cause: unknown): Outcome => {
      // The database does not answer: a read answered before is answered the same (stale-answers.ts),
      // unless it was already, past its budget (this outcome is then dropped).
      const stale = racing?.answered === true ? undefined : this.staleFor(binding, call, cause);
      if (stale !== undefined) return { service: routes.name, binding: binding.name, operation, reply: stale };
      // Refused arguments are the caller's to fix: only other failures are logged.
      const logged = cause instanceof InvalidArgumentError ? undefined : cause;
      return {
        service: routes.name,
        binding: binding.name,
        operation,
        cause: logged,
        reply: binding.fail(failure(cause)),
      };
    };
    let result: ResultValue | Promise<ResultValue>;
    try {
      result = call.op.run(call.args, withCaller(this.context, ex));
    } catch (cause) {
      return failed(cause);
    }
    if (!(result instanceof Promise)) return written(result);
    const pending = result.then(written, failed);
    if (racing !== undefined) return pending;
    racing = this.deadline(ex, routes, binding, call, kept?.key ?? null);
    return racing === null ? pending : racing.first(pending);
  }

  /** A read's last answer to serve instead of the failure `cause`, if any (StaleAnswers.answer). */
  private staleFor(binding: Binding, call: Call, cause: unknown): Reply | undefined {
    if (this.stale === null || call.op.writes === true) return undefined;
    const key = answerKey(binding.name, call);
    return key === null ? undefined : this.stale.answer(key, cause);
  }

  /**
   * The budget of a read that waits for the database, when it has a stale answer to give past it
   * (SIS_STALE_AFTER_MS, less what the rate limit's Redis took, but never less than a fifth of it:
   * the database is always given a moment); null otherwise. `key`: the call's, if known.
   */
  private deadline(
    ex: Exchange,
    routes: ServiceRoutes,
    binding: Binding,
    call: Call,
    key: string | null,
  ): StaleDeadline | null {
    const afterMs = this.config.staleAfterMs;
    if (this.stale === null || afterMs === 0 || call.op.writes === true) return null;
    const k = key ?? answerKey(binding.name, call);
    if (k === null || !this.stale.has(k)) return null;
    const stale = this.stale;
    const operation = call.op.name;
    return new StaleDeadline(Math.max(afterMs - (ex.waitedMs ?? 0), afterMs / 5), () => {
      const reply = stale.late(k);
      return reply === undefined ? undefined : { service: routes.name, binding: binding.name, operation, reply };
    });
  }

  /** What the cache holds for a cacheable call (see AnswerCache.lookUp); null for any other. */
  private cached(binding: Binding, call: Call): Kept | null | Promise<Kept | null> {
    if (this.cache === null || call.op.cacheable !== true) return null;
    return this.cache.lookUp(binding.name, call, this.context.store);
  }

  /** `GET /X.asmx[?query]`: the service description and help pages. */
  private describe(ex: Exchange, routes: ServiceRoutes): Outcome {
    const { config } = this;
    const reply = this.metadata.render(routes.service, ex.target?.query ?? '', {
      origin: ex.origin(),
      basePath: config.basePath,
      host: ex.header('host') ?? '',
      showTestForm: config.helpTestForm === 'all' || (config.helpTestForm === 'local' && ex.isLocal),
    });
    return { service: routes.name, reply: reply ?? NO_SUCH_DESCRIPTION };
  }
}

/** A body that could not be read: too large is the caller's to hear (the binding's way); anything else is ours. */
function bodyRefused(err: unknown, route: Route): Read {
  if (!(err instanceof ServiceError)) throw err;
  return { binding: route.binding!, error: err, operation: route.operation?.name };
}

/**
 * The dispatcher's context with this call's caller. Linked to it rather than copied: on Node 20 an
 * object spread followed by a property (`{ ...context, caller }`) measured far dearer than the
 * link, and under load the copies' ever-new shapes made every read of them slow (bench/RESULTS.md).
 * The request path spells its objects out for the same reason.
 */
function withCaller(context: OperationContext, caller: Caller): OperationContext {
  const own = Object.create(context) as { -readonly [K in keyof OperationContext]: OperationContext[K] };
  own.caller = caller;
  return own;
}

/** Refused arguments are the caller's to fix; anything else becomes safe words (the cause is logged). */
function failure(cause: unknown): OperationFailedError | InvalidArgumentError {
  if (cause instanceof InvalidArgumentError || cause instanceof OperationFailedError) return cause;
  return new OperationFailedError(OPERATION_FAILED, { cause });
}
