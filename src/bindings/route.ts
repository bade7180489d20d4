/**
 * Where a request goes, decided from its method, target and headers, before its body is read: the
 * service file, what kind of request it is, the binding asked and, for HTTP GET and POST, the
 * operation its path names. Its owner finds it once per request and hands it on (the dispatcher
 * alone, or the shadow, which then has the dispatcher read and answer the request on that route).
 * Every route is built at start: finding one allocates nothing.
 */
import type { Operation } from '../operations/index.js';
import { HTTP_GET } from './http-get.js';
import { HTTP_POST } from './http-post.js';
import { firstGuess, SOAP11, SOAP12 } from './soap.js';
import type { Binding, Exchange, Read, Route, RouteKind, ServiceRoutes } from './types.js';

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
  const route = (kind: RouteKind, binding: Binding | null, operation: Operation | null, wantsBody: boolean): Route => ({
    service,
    kind,
    binding,
    operation,
    wantsBody,
  });
  // HTTP POST reads its form only once the path names an operation, as ASMX finds the method first.
  const byName = (binding: Binding, wantsBody: boolean): Map<string, Route> =>
    new Map(service.service.operations.map((op) => [op.name, route('call', binding, op, wantsBody)]));
  return {
    soap11: route('call', SOAP11, null, true),
    soap12: route('call', SOAP12, null, true),
    describe: route('describe', null, null, false),
    methodNotAllowed: route('method-not-allowed', null, null, false),
    notAFormat: route('not-a-format', null, null, false),
    httpGet: byName(HTTP_GET, false),
    httpPost: byName(HTTP_POST, true),
    unknownGet: route('call', HTTP_GET, null, false),
    unknownPost: route('call', HTTP_POST, null, false),
  };
}

/** The request's route, or null when its target names no service file of ours. */
export function findRoute(ex: Exchange, sets: RouteSets): Route | null {
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
 * The operation a request read on `route` runs, as ASMX would: the call's, or the one its read
 * names when it fails (SOAP names it in the body); null when none is known (an unknown name, a
 * SOAP action or body element the file lacks, a body that could not be read).
 */
export function operationOf(route: Route, read: Read): Operation | null {
  if (read.error === undefined) return read.call.op;
  return read.operation === undefined ? null : (route.service.byName.get(read.operation) ?? null);
}
