import { soapAction } from '../contract/soap-action.js';
import type { Operation, Service } from '../operations/index.js';
import { createResultWriter } from '../xml/result-writer.js';
import type { ResultWriter } from '../xml/result-writer.js';
import type { ReadLimits, ServiceRoutes } from './types.js';

/** A service file's routes, built once at start (the interface is in types.ts). */
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
  return { service, name: service.name, namespace, byAction, byElement, byName, byLowerName, writers, limits };
}

/** All service files by lower-cased name (`.asmx` names match case-insensitively, as on IIS). */
export function buildRouteTable(
  services: readonly Service[],
  namespace: string,
  limits: ReadLimits,
): ReadonlyMap<string, ServiceRoutes> {
  return new Map(services.map((s) => [s.name.toLowerCase(), buildServiceRoutes(s, namespace, limits)]));
}
