import type { Config } from '../config/config.js';
import {
  HttpBindingError,
  InvalidArgumentError,
  OperationFailedError,
  PageError,
  ServiceError,
  SoapFaultError,
} from '../errors/errors.js';
import { AnswerCache } from './answer-cache.js';
import type { Kept } from './answer-cache.js';
import type { MetadataEndpoint } from './metadata-endpoint.js';
import type { OperationContext } from '../operations/context.js';
import type { Operation, Service } from '../operations/index.js';
import { escapeHtml } from '../xml/escape.js';
import type { EnvelopeLimits } from '../xml/envelope-reader.js';
import { readHttpGet, readHttpPost } from './http-get-post.js';
import { httpErrorReply, httpReply, pageReply, soapErrorReply, soapReply } from './replies.js';
import { buildRouteTable } from './service-routes.js';
import type { ServiceRoutes } from './service-routes.js';
import type { RequestTarget } from './request-target.js';
import { readSoap } from './soap.js';
import type { SoapRequest } from './soap.js';
import { guessVersion } from './soap-version.js';
import { parseMediaType } from './content-type.js';
import type { BindingName, Call, Reply } from './types.js';

/** What dispatch needs of an HTTP request; the HTTP layer provides it. */
export interface Exchange {
  readonly method: string;
  /** The request target as sent: path and query, still percent-encoded. */
  readonly url: string;
  /** The same, parsed once for everyone (null: it names no service file under the base path). */
  readonly target: RequestTarget | null;
  header(name: string): string | undefined;
  /** The whole body; rejects with RequestTooLargeError past the configured limit. */
  readBody(): Promise<Buffer>;
  /** `scheme://host[:port]` as the client addressed the service (decision 3). */
  origin(): string;
  /** The caller is on this machine (the help page test form is offered to it by default). */
  readonly isLocal: boolean;
  /** The caller's address (behind a trusted proxy, the forwarded one): operations get it in their context. */
  readonly clientAddress: string;
}

/** The reply, and what logs and metrics say about the request. */
export interface Outcome {
  readonly reply: Reply;
  readonly service?: string;
  readonly operation?: string;
  readonly binding?: BindingName;
  /** The failure behind an operation error, for the log only. */
  readonly cause?: unknown;
}

/** Safe words for an operation failure: the cause (SQL, paths, stacks) only goes to the log. */
export const OPERATION_FAILED = 'The service could not complete the request. The error has been logged.';

const notFound = (): PageError =>
  new PageError(
    404,
    'The resource cannot be found.',
    'The requested URL was not found on this server. Check the service file name.',
  );

/**
 * Routes a request as ASMX does: the `.asmx` file (case-insensitive), then the verb and path
 * shape picks the protocol: SOAP (POST /X.asmx), HTTP GET and POST (/X.asmx/Op), service
 * description (GET /X.asmx?WSDL, ?disco) or help pages (GET /X.asmx[?op=Op]).
 */
export class Dispatcher {
  private readonly routes: ReadonlyMap<string, ServiceRoutes>;
  private readonly limits: EnvelopeLimits;
  /** Kept answers of cacheable operations; null when SIS_ANSWER_CACHE_BYTES is 0. */
  readonly cache: AnswerCache | null;

  constructor(
    services: readonly Service[],
    private readonly config: Config,
    private readonly context: OperationContext,
    private readonly metadata: MetadataEndpoint,
  ) {
    this.routes = buildRouteTable(services, config.namespace);
    this.limits = { maxDepth: config.maxXmlDepth, maxAttributes: 256, maxParams: 1024 };
    this.cache = config.answerCacheBytes > 0 ? new AnswerCache(config.answerCacheBytes) : null;
  }

  /**
   * Not an async function, nor are the steps below: each awaits only what must be awaited (the
   * body, the operation), so a request costs a few promise hops rather than one per layer.
   */
  dispatch(ex: Exchange): Promise<Outcome> {
    try {
      return Promise.resolve(this.route(ex));
    } catch (err) {
      return Promise.reject(err as Error);
    }
  }

  private route(ex: Exchange): Outcome | Promise<Outcome> {
    const target = ex.target;
    const routes = target === null ? undefined : this.routes.get(target.serviceKey);
    if (target === null || routes === undefined) return { reply: pageReply(notFound()) };
    const service = routes.service.name;
    if (target.opPath === undefined) return this.serviceEndpoint(ex, routes, service, target.query);
    return this.operationEndpoint(ex, routes, service, target.opPath, target.query);
  }

  /** `/X.asmx`: SOAP on POST; description and help pages on GET; 405 otherwise. */
  private serviceEndpoint(
    ex: Exchange,
    routes: ServiceRoutes,
    service: string,
    query: string,
  ): Outcome | Promise<Outcome> {
    if (ex.method === 'POST') return this.soap(ex, routes, service);
    if (ex.method !== 'GET') {
      return { service, reply: pageReply(new PageError(405, 'Method Not Allowed', 'Request format is unrecognized.')) };
    }
    const reply = this.metadata.render(routes.service, query, {
      origin: ex.origin(),
      basePath: this.config.basePath,
      host: ex.header('host') ?? '',
      showTestForm: this.config.helpTestForm === 'all' || (this.config.helpTestForm === 'local' && ex.isLocal),
    });
    return {
      service,
      reply:
        reply ??
        pageReply(
          new PageError(
            404,
            'The resource cannot be found.',
            'This service has one service description, with no separate parts: ask for ?WSDL (or ?disco).',
          ),
        ),
    };
  }

  private soap(ex: Exchange, routes: ServiceRoutes, service: string): Promise<Outcome> {
    const contentType = ex.header('content-type');
    const soapAction = ex.header('soapaction');
    return ex.readBody().then(
      (body) => this.soapCall(routes, service, { contentType, soapAction, body }, ex.clientAddress),
      (err: unknown) => {
        if (!(err instanceof ServiceError)) throw err;
        const guess = guessVersion(soapAction, parseMediaType(contentType));
        return { service, binding: guess.binding, reply: soapErrorReply(guess, err) };
      },
    );
  }

  private soapCall(
    routes: ServiceRoutes,
    service: string,
    request: SoapRequest,
    address: string,
  ): Outcome | Promise<Outcome> {
    const read = readSoap(routes, request, this.limits);
    const { version } = read;
    const binding = version.binding;
    if ('error' in read) return { service, binding, reply: soapErrorReply(version, read.error) };
    const operation = read.call.op.name;
    if (read.mustUnderstand !== null) {
      // ASMX checks after running the method; we check before, so a refused call changes nothing.
      const fault = new SoapFaultError(
        'MustUnderstand',
        `SOAP header ${read.mustUnderstand} was not understood.`,
        true,
      );
      return { service, binding, operation, reply: soapErrorReply(version, fault) };
    }
    const writer = routes.writers.get(read.call.op)!;
    return this.answer(
      read.call,
      address,
      service,
      binding,
      (value) => soapReply(version, writer, value),
      (error) => soapErrorReply(version, error),
    );
  }

  /** `/X.asmx/Op`: HTTP GET and POST; other verbs and shapes get ASMX's errors. */
  private operationEndpoint(
    ex: Exchange,
    routes: ServiceRoutes,
    service: string,
    opPath: string,
    query: string,
  ): Outcome | Promise<Outcome> {
    const isGet = ex.method === 'GET';
    if ((!isGet && ex.method !== 'POST') || opPath === '') {
      const message = `Request format is unrecognized for URL unexpectedly ending in '/${opPath}'.`;
      return { service, reply: pageReply(new PageError(500, 'Request format is unrecognized.', message)) };
    }
    const binding: BindingName = isGet ? 'httpget' : 'httppost';
    const op = routes.byName.get(opPath);
    if (op === undefined) return { service, binding, reply: httpErrorReply(unknownMethod(routes, opPath)) };
    const refused = (err: unknown): Outcome => {
      if (!(err instanceof ServiceError)) throw err;
      return { service, binding, operation: op.name, reply: httpErrorReply(err) };
    };
    const writer = routes.writers.get(op)!;
    const run = (call: Call): Outcome | Promise<Outcome> =>
      this.answer(call, ex.clientAddress, service, binding, (value) => httpReply(writer, value), httpErrorReply);
    if (!isGet) {
      return ex.readBody().then((body) => {
        let call: Call;
        try {
          call = readHttpPost(op, ex.header('content-type'), body, this.config.maxFormFields);
        } catch (err) {
          return refused(err);
        }
        return run(call);
      }, refused);
    }
    let call: Call;
    try {
      call = readHttpGet(op, query, this.config.maxFormFields);
    } catch (err) {
      return refused(err);
    }
    return run(call);
  }

  /**
   * Runs a call and turns its result or failure into the binding's reply. A cacheable call is
   * answered from the cache while the data is unchanged, and its reply kept otherwise. A version
   * told synchronously (SQLite) costs no promise hop; one read from the database is awaited first.
   */
  private answer(
    call: Call,
    address: string,
    service: string,
    binding: BindingName,
    reply: (value: Awaited<ReturnType<Operation['run']>>) => Reply,
    failure: (error: OperationFailedError | InvalidArgumentError) => Reply,
  ): Outcome | Promise<Outcome> {
    const kept = this.cached(binding, call);
    if (kept instanceof Promise)
      return kept.then((found) => this.answerWith(found, call, address, service, binding, reply, failure));
    return this.answerWith(kept, call, address, service, binding, reply, failure);
  }

  private answerWith(
    kept: Kept | null,
    call: Call,
    address: string,
    service: string,
    binding: BindingName,
    reply: (value: Awaited<ReturnType<Operation['run']>>) => Reply,
    failure: (error: OperationFailedError | InvalidArgumentError) => Reply,
  ): Outcome | Promise<Outcome> {
    const operation = call.op.name;
    if (kept?.reply !== undefined) return { service, binding, operation, reply: kept.reply };
    return this.invoke(call, address).then((result) => {
      if (result.error !== undefined)
        return { service, binding, operation, cause: result.cause, reply: failure(result.error) };
      const built = reply(result.value);
      if (kept !== null) this.cache?.set(kept.key, kept.version, built);
      return { service, binding, operation, reply: built };
    });
  }

  /** What the cache holds for a cacheable call (see AnswerCache.lookUp); null for any other. */
  private cached(binding: BindingName, call: Call): Kept | null | Promise<Kept | null> {
    if (this.cache === null || call.op.cacheable !== true) return null;
    return this.cache.lookUp(binding, call, this.context.store);
  }

  /** Runs the operation with the caller's address in its context; a failure becomes an error to answer with (and a cause to log). */
  private invoke(call: Call, clientAddress: string): Promise<Invoked> {
    let pending: ReturnType<Operation['run']>;
    try {
      pending = call.op.run(call.args, { ...this.context, clientAddress });
    } catch (cause) {
      return Promise.resolve(failed(cause));
    }
    return pending.then(succeeded, failed);
  }
}

type Invoked =
  | { value: Awaited<ReturnType<Operation['run']>>; error?: undefined }
  | { error: OperationFailedError | InvalidArgumentError; cause?: unknown };

const succeeded = (value: Awaited<ReturnType<Operation['run']>>): Invoked => ({ value });

/** Refused arguments are the caller's to fix; anything else is logged. */
function failed(cause: unknown): Invoked {
  if (cause instanceof InvalidArgumentError) return { error: cause };
  const error = cause instanceof OperationFailedError ? cause : new OperationFailedError(OPERATION_FAILED, { cause });
  return { error, cause };
}

/** ASMX's words for a method name that is not there, or there only in another case. */
function unknownMethod(routes: ServiceRoutes, name: string): HttpBindingError {
  const other = routes.byLowerName.get(name.toLowerCase());
  if (other !== undefined) {
    return new HttpBindingError(
      `${escapeHtml(`Invalid method name '${name}',  method names are case sensitive.   The method name '${other.name}' with the same name but different casing was found.`)}\r\nParameter name: methodName`,
    );
  }
  return new HttpBindingError(`${escapeHtml(name)} Web Service method name is not valid.`);
}
