import { soapAction } from '../contract/soap-action.js';
import type { Operation, Service } from '../operations/index.js';
import type { EnvelopeLimits } from '../xml/envelope-reader.js';
import { createResultWriter } from '../xml/result-writer.js';
import type { ResultWriter } from '../xml/result-writer.js';

/** What a request may cost to read, the same for every route (from the settings). */
export interface ReadLimits {
  readonly envelope: EnvelopeLimits;
  /** Fields of a query string or form body read at most (SIS_MAX_FORM_FIELDS). */
  readonly maxFormFields: number;
}

/**
 * Everything a binding looks up for one service file, computed once at start: the one route
 * object a request carries through dispatch and its binding.
 */
export interface ServiceRoutes {
  readonly service: Service;
  /** The service file's name, as logs and metrics label it. */
  readonly name: string;
  readonly namespace: string;
  /** SOAPAction value (after unquoting and URL-decoding) → operation. */
  readonly byAction: ReadonlyMap<string, Operation>;
  /** Local name of the body element, in the service namespace → operation. */
  readonly byElement: ReadonlyMap<string, Operation>;
  /** Operation name in a GET/POST path (case-sensitive, as ASMX). */
  readonly byName: ReadonlyMap<string, Operation>;
  /** Lower-cased name → operation, only to word ASMX's "wrong case" error. */
  readonly byLowerName: ReadonlyMap<string, Operation>;
  readonly writers: ReadonlyMap<Operation, ResultWriter>;
  readonly limits: ReadLimits;
  /** One of its operations writes (`writes` on its definition): its personal data is masked where kept. */
  readonly writes: boolean;
}

export function buildServiceRoutes(service: Service, namespace: string, limits: ReadLimits): ServiceRoutes {
  const byAction = new Map<string, Operation>();
  const byElement = new Map<string, Operation>();
  const byName = new Map<string, Operation>();
  const byLowerName = new Map<string, Operation>();
  const writers = new Map<Operation, ResultWriter>();
  for (const op of service.operations) {
    byAction.set(soapAction(namespace, op.name), op);
    byElement.set(op.name, op);
    byName.set(op.name, op);
    byLowerName.set(op.name.toLowerCase(), op);
    writers.set(op, createResultWriter(op.name, op.result, namespace));
  }
  const writes = service.operations.some((op) => op.writes === true);
  return { service, name: service.name, namespace, byAction, byElement, byName, byLowerName, writers, limits, writes };
}

/** All service files by lower-cased name (`.asmx` names match case-insensitively, as on IIS). */
export function buildRouteTable(
  services: readonly Service[],
  namespace: string,
  limits: ReadLimits,
): ReadonlyMap<string, ServiceRoutes> {
  return new Map(services.map((s) => [s.name.toLowerCase(), buildServiceRoutes(s, namespace, limits)]));
}
