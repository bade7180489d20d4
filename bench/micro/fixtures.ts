/** What the in-process micro-benchmarks work on: the scenarios' requests, routes, writers and rows. */
import { buildRouteTable, buildServiceRoutes } from '../../src/bindings/service-routes.js';
import type { ServiceRoutes } from '../../src/bindings/types.js';
import { services } from '../../src/operations/index.js';
import type { Service } from '../../src/operations/index.js';
import { createResultWriter } from '../../src/xml/result-writer.js';
import type { ResultWriter } from '../../src/xml/result-writer.js';
import { NS } from '../scenarios/asmx-xml.js';
import { BIG_SCHOOL, SMALL_SCHOOL, activeStudents } from '../scenarios/datasets.js';
import type { Dataset, Student } from '../scenarios/datasets.js';
import { scenarios } from '../scenarios/scenarios.js';

export const LIMITS = { maxDepth: 64, maxAttributes: 256, maxParams: 1024 };
export const READ_LIMITS = { envelope: LIMITS, maxFormFields: 1000 };

/** A student as the store hands it to the operations. */
export type Row = Record<string, string | null>;

export interface RequestBytes {
  readonly body: Buffer;
  readonly text: string;
  readonly headers: Readonly<Record<string, string>>;
}

export interface SoapFixtures {
  readonly token11: RequestBytes;
  readonly token12: RequestBytes;
  readonly school11: RequestBytes;
  readonly push: ServiceRoutes;
  readonly notes: ServiceRoutes;
  readonly table: ReadonlyMap<string, ServiceRoutes>;
  readonly tokenWriter: ResultWriter;
  readonly schoolWriter: ResultWriter;
  readonly small: Row[];
  readonly big: Row[];
}

function serviceNamed(name: string): Service {
  const s = services.find((x) => x.name === name);
  if (s === undefined) throw new Error(`no service ${name}`);
  return s;
}

export function record(s: Student): Row {
  return { id_student: s.id_student, fullName: s.fullName, id_device: s.id_device, ShowActive: s.ShowActive };
}

export function soapFixtures(data: Dataset): SoapFixtures {
  const all = scenarios(data);
  const scenario = (id: string): RequestBytes => {
    const s = all.find((x) => x.id === id)!;
    const body = Buffer.from(s.request.body ?? '', 'utf8');
    // Decoded from bytes, as a request's text is: a flat string, not the rope a template builds.
    return { body, text: body.toString('utf8'), headers: s.request.headers };
  };
  const push = buildServiceRoutes(serviceNamed('PushNotificationMobile'), NS, READ_LIMITS);
  const notes = buildServiceRoutes(serviceNamed('NotificationNotes'), NS, READ_LIMITS);
  const table = buildRouteTable(services, NS, READ_LIMITS);
  const tokenOp = push.byName.get('GetTokenDevice')!;
  const schoolOp = notes.byName.get('GetStudentSchool')!;
  return {
    token11: scenario('token-soap11'),
    token12: scenario('token-soap12'),
    school11: scenario('school-soap11'),
    push,
    notes,
    table,
    tokenWriter: push.writers.get(tokenOp)!,
    schoolWriter: createResultWriter(schoolOp.name, schoolOp.result, NS),
    small: activeStudents(data, SMALL_SCHOOL).map(record),
    big: activeStudents(data, BIG_SCHOOL).map(record),
  };
}
