/** Micro-benchmark cases of the SOAP path in-process: envelope reading, answer writing, routing, all three. */
import { SaxesParser } from 'saxes';
import { buildRouteTable } from '../../src/bindings/service-routes.js';
import { SOAP11, firstGuess } from '../../src/bindings/soap.js';
import type { ServiceRoutes } from '../../src/bindings/types.js';
import type { OperationContext } from '../../src/operations/context.js';
import { services } from '../../src/operations/index.js';
import { readEnvelope } from '../../src/xml/envelope-reader.js';
import { NS } from '../scenarios/asmx-xml.js';
import { SMALL_SCHOOL, TOKEN } from '../scenarios/datasets.js';
import { LIMITS, READ_LIMITS } from './fixtures.js';
import type { RequestBytes, SoapFixtures } from './fixtures.js';
import type { MicroCase } from './measure.js';

export function soapCases(fx: SoapFixtures): MicroCase[] {
  return [...envelopeCases(fx), ...writerCases(fx), ...routingCases(fx), ...soapPathCases(fx)];
}

/** What the SOAP bindings do with a request whose body is read: the first guess, then the reading. */
function readSoap(routes: ServiceRoutes, r: RequestBytes) {
  const req = { contentType: r.headers['Content-Type'], soapAction: r.headers['SOAPAction'], body: r.body };
  return firstGuess(req.soapAction, req.contentType).readRequest(routes, req);
}

const soapReq = (routes: ServiceRoutes, r: RequestBytes) => () => readSoap(routes, r);

function envelopeCases({ token11, token12, school11, push, notes }: SoapFixtures): MicroCase[] {
  return [
    {
      group: 'envelope scan',
      name: 'saxes alone, no handlers (GetTokenDevice 1.1)',
      fn: () => new SaxesParser({ xmlns: true, position: true }).write(token11.text).close(),
    },
    {
      group: 'envelope scan',
      name: 'readEnvelope GetTokenDevice (SOAP 1.1)',
      fn: () => readEnvelope(token11.text, NS, LIMITS),
    },
    {
      group: 'envelope scan',
      name: 'readEnvelope GetStudentSchool (SOAP 1.1)',
      fn: () => readEnvelope(school11.text, NS, LIMITS),
    },
    { group: 'envelope scan', name: 'readSoap GetTokenDevice (SOAP 1.1)', fn: soapReq(push, token11) },
    { group: 'envelope scan', name: 'readSoap GetTokenDevice (SOAP 1.2)', fn: soapReq(push, token12) },
    { group: 'envelope scan', name: 'readSoap GetStudentSchool (SOAP 1.1)', fn: soapReq(notes, school11) },
    {
      group: 'envelope scan',
      name: 'necessary: indexOf <id>…</id> (GetTokenDevice 1.1)',
      fn: () => {
        const from = token11.text.indexOf('<id>') + 4;
        return token11.text.slice(from, token11.text.indexOf('</id>', from));
      },
    },
  ];
}

function writerCases({ tokenWriter, schoolWriter, small, big }: SoapFixtures): MicroCase[] {
  return [
    { group: 'answer text', name: 'soapBody GetTokenDevice (string)', fn: () => tokenWriter.soapBody(TOKEN) },
    { group: 'answer text', name: 'httpDocument GetTokenDevice (string)', fn: () => tokenWriter.httpDocument(TOKEN) },
    {
      group: 'answer text',
      name: `soapBody GetStudentSchool (${small.length} students)`,
      fn: () => schoolWriter.soapBody(small),
    },
    {
      group: 'answer text',
      name: `httpDocument GetStudentSchool (${small.length} students)`,
      fn: () => schoolWriter.httpDocument(small),
    },
    {
      group: 'answer text',
      name: `soapBody GetStudentSchool (${big.length} students)`,
      fn: () => schoolWriter.soapBody(big),
    },
    {
      group: 'answer text',
      name: `soapReply envelope + GetTokenDevice`,
      fn: () => SOAP11.write(tokenWriter, TOKEN).body,
    },
  ];
}

function routingCases({ table }: SoapFixtures): MicroCase[] {
  return [
    {
      group: 'routing',
      name: 'buildRouteTable (start-up, all services)',
      fn: () => buildRouteTable(services, NS, READ_LIMITS),
    },
    {
      group: 'routing',
      name: 'service by file name + operation by SOAPAction',
      fn: () => table.get('pushnotificationmobile')?.byAction.get(`${NS}GetTokenDevice`),
    },
    {
      group: 'routing',
      name: 'service by file name + operation by path (GET/POST)',
      fn: () => table.get('notificationnotes')?.byName.get('GetStudentSchool'),
    },
  ];
}

function soapPathCases({ token11, school11, push, notes, small, big }: SoapFixtures): MicroCase[] {
  // An in-memory store: the SOAP path without a database (only what the operations call).
  const memory = {
    deviceToken: async (id: string) => (id === '1' ? TOKEN : null),
    studentsOfSchool: async (school: string) => (school === SMALL_SCHOOL ? small : big),
    // One page: both lists fit in the default page, so they are answered whole.
    studentsOfSchoolPages: async function* (school: string) {
      yield school === SMALL_SCHOOL ? small : big;
    },
    recordAuthCode: async () => undefined,
  };
  const ctx = { store: memory, now: () => new Date() } as unknown as OperationContext;
  const soapPath = (routes: ServiceRoutes, r: RequestBytes) => async () => {
    const read = readSoap(routes, r);
    if (read.error !== undefined) throw read.error;
    const value = await read.call.op.run(read.call.args, ctx);
    return read.binding.write(routes.writers.get(read.call.op)!, value).body;
  };
  return [
    {
      group: 'soap path',
      name: 'read + run + write GetTokenDevice (1.1, memory store)',
      fn: soapPath(push, token11),
      async: true,
    },
    {
      group: 'soap path',
      name: 'read + run + write GetStudentSchool 2 (1.1, memory store)',
      fn: soapPath(notes, school11),
      async: true,
    },
  ];
}
