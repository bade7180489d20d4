/**
 * Where a request goes, decided once from its method, target and headers, before its body is
 * read: the service file, what kind of request it is, the binding asked first and, for HTTP GET
 * and POST, the operation its path names. The dispatcher runs it; the shadow asks it what a
 * request is before anyone answers (its labels, whether it may write); the metrics and the access
 * log label what the dispatcher made of it. Every route is built at start: finding one allocates
 * nothing, and it is kept on the exchange, so it is found once per request whoever asks first.
 */
import type { Operation } from '../operations/index.js';
import type { Binding } from './binding.js';
import { parseMediaType } from './content-type.js';
import type { Exchange } from './exchange.js';
import { HTTP_GET } from './http-get.js';
import { HTTP_POST } from './http-post.js';
import type { ServiceRoutes } from './service-routes.js';
import { decodeAction } from './soap-envelope.js';
import { firstGuess, SOAP11, SOAP12 } from './soap.js';

/**
 * `call`: a binding reads the request (SOAP on POST /X.asmx, HTTP GET and POST on /X.asmx/Op);
 * `describe`: GET /X.asmx[?query], the service description and help pages; `method-not-allowed`:
 * another verb on /X.asmx; `not-a-format`: another verb, or an empty name, on /X.asmx/Op.
 */
export type RouteKind = 'call' | 'describe' | 'method-not-allowed' | 'not-a-format';

export interface Route {
  readonly service: ServiceRoutes;
  readonly kind: RouteKind;
  /** The binding asked first (`call` only): for SOAP, ASMX's first guess (soap.ts); the envelope may settle the other version. */
  readonly binding: Binding | null;
  /** The operation an HTTP GET or POST path names, when the file has it; SOAP names its own in the body. */
  readonly operation: Operation | null;
  /**
   * The request may change something, so it is never sent twice: its operation writes, or, when
   * the operation is not known before the body (SOAP, an unknown name), its file has one that does.
   */
  readonly writes: boolean;
}

/** Every route of one service file, built at start. */
export interface ServiceRouteSet {
  readonly soap11: Route;
  readonly soap12: Route;
  readonly describe: Route;
  readonly methodNotAllowed: Route;
  readonly notAFormat: Route;
  /** By the operation name in the path (case-sensitive, as ASMX); `unknown*` for a name the file lacks. */
  readonly httpGet: ReadonlyMap<string, Route>;
  readonly httpPost: ReadonlyMap<string, Route>;
  readonly unknownGet: Route;
  readonly unknownPost: Route;
}

/** The route sets by lower-cased file name (as the route table). */
export type RouteSets = ReadonlyMap<string, ServiceRouteSet>;

export function buildRouteSets(table: ReadonlyMap<string, ServiceRoutes>): RouteSets {
  return new Map([...table].map(([key, routes]) => [key, routeSetOf(routes)]));
}

function routeSetOf(service: ServiceRoutes): ServiceRouteSet {
  const route = (kind: RouteKind, binding: Binding | null, operation: Operation | null, writes: boolean): Route => ({
    service,
    kind,
    binding,
    operation,
    writes,
  });
  const byName = (binding: Binding): Map<string, Route> =>
    new Map(service.service.operations.map((op) => [op.name, route('call', binding, op, op.writes === true)]));
  return {
    soap11: route('call', SOAP11, null, service.writes),
    soap12: route('call', SOAP12, null, service.writes),
    describe: route('describe', null, null, false),
    methodNotAllowed: route('method-not-allowed', null, null, false),
    notAFormat: route('not-a-format', null, null, service.writes),
    httpGet: byName(HTTP_GET),
    httpPost: byName(HTTP_POST),
    unknownGet: route('call', HTTP_GET, null, service.writes),
    unknownPost: route('call', HTTP_POST, null, service.writes),
  };
}

/**
 * The request's route, or null when its target names no service file of ours. Found once and
 * kept on the exchange: the second asker (the dispatcher behind the shadow) reads it there.
 */
export function routeOf(ex: Exchange, sets: RouteSets): Route | null {
  const kept = ex.route;
  if (kept !== undefined) return kept;
  return (ex.route = find(ex, sets));
}

function find(ex: Exchange, sets: RouteSets): Route | null {
  const target = ex.target;
  const set = target === null ? undefined : sets.get(target.serviceKey);
  if (target === null || set === undefined) return null;
  const { opPath } = target;
  const { method } = ex;
  if (opPath === undefined) {
    // `/X.asmx`: SOAP on POST; description and help pages on GET; 405 otherwise.
    if (method === 'POST')
      return firstGuess(ex.header('soapaction'), ex.header('content-type')) === SOAP12 ? set.soap12 : set.soap11;
    return method === 'GET' ? set.describe : set.methodNotAllowed;
  }
  // `/X.asmx/Op`: HTTP GET and POST; other verbs and an empty name are not a request format.
  if (opPath !== '' && method === 'GET') return set.httpGet.get(opPath) ?? set.unknownGet;
  if (opPath !== '' && method === 'POST') return set.httpPost.get(opPath) ?? set.unknownPost;
  return set.notAFormat;
}

/**
 * The operation a request names before its body is read: the route's (HTTP GET and POST), or the
 * one its SOAP action names (SOAPAction in 1.1, the Content-Type's `action` in 1.2), which is how
 * ASMX routes SOAP when it can. Null when neither names one of the file's (the body element then
 * decides). For those who must choose before the body (the shadow's mode), not for dispatch.
 */
export function namedOperation(ex: Exchange, route: Route): Operation | null {
  if (route.operation !== null || (route.binding !== SOAP11 && route.binding !== SOAP12)) return route.operation;
  const raw =
    route.binding === SOAP11
      ? unquote(ex.header('soapaction') ?? '')
      : (parseMediaType(ex.header('content-type')).param('action') ?? '');
  return raw === '' ? null : (route.service.byAction.get(decodeAction(raw)) ?? null);
}

function unquote(value: string): string {
  return value.length >= 2 && value.startsWith('"') && value.endsWith('"') ? value.slice(1, -1) : value;
}
