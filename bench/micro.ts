/**
 * Micro-benchmarks of the hot path, in-process: envelope reading, answer writing, routing, the
 * whole SOAP path without HTTP, and the store. Each case is warmed up, then timed in slices with
 * process.hrtime.bigint(); the median slice is reported.
 *
 * Usage: node dist/bench/micro.js [REGEX]   (BENCH_MICRO_SECONDS=1 per case)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { SaxesParser } from 'saxes';
import { soapReply } from '../src/bindings/replies.js';
import { buildRouteTable, buildServiceRoutes } from '../src/bindings/service-routes.js';
import type { ServiceRoutes } from '../src/bindings/service-routes.js';
import { readSoap } from '../src/bindings/soap.js';
import { SOAP11 } from '../src/bindings/soap-version.js';
import type { OperationContext } from '../src/operations/context.js';
import { services } from '../src/operations/index.js';
import type { Service } from '../src/operations/index.js';
import { openStore } from '../src/store/open-store.js';
import type { Store } from '../src/store/store.js';
import { isStreamed } from '../src/xml/chunked-text.js';
import { readEnvelope } from '../src/xml/envelope-reader.js';
import { createResultWriter } from '../src/xml/result-writer.js';
import { NS } from './asmx-xml.js';
import { BIG_SCHOOL, SMALL_SCHOOL, TOKEN, activeStudents, mainDataset, makeStudents } from './datasets.js';
import type { Student } from './datasets.js';
import { scenarios } from './scenarios.js';
import { median } from './stats.js';
import { writeListChunks } from './writer-prototype.js';

const filter = process.argv[2] === undefined ? null : new RegExp(process.argv[2]);
const seconds = Number(process.env['BENCH_MICRO_SECONDS'] ?? 1);
const LIMITS = { maxDepth: 64, maxAttributes: 256, maxParams: 1024 };

interface Case {
  readonly group: string;
  readonly name: string;
  readonly fn: () => unknown;
  readonly async?: boolean;
}

// Results feed this so no call can be optimised away.
let sink = 0;
function consume(v: unknown): void {
  sink += typeof v === 'string' ? v.length : v === undefined || v === null ? 0 : 1;
}

async function measure(c: Case): Promise<{ opsPerSec: number; spread: number }> {
  const sliceNs = BigInt(Math.round((seconds / 5) * 1e9));
  let batch = 1;
  const run = async (untilNs: bigint): Promise<number> => {
    let n = 0;
    const start = process.hrtime.bigint();
    const end = start + untilNs;
    let now = start;
    while (now < end) {
      // Batches keep the clock out of the measurement.
      for (let i = 0; i < batch; i++) consume(c.async === true ? await (c.fn() as Promise<unknown>) : c.fn());
      n += batch;
      now = process.hrtime.bigint();
    }
    return n / (Number(now - start) / 1e9);
  };
  // Warm-up: lets the JIT settle, and sizes batches to about 50 µs of work.
  const warm = await run(BigInt(Math.round(Math.min(0.5, seconds / 2) * 1e9)));
  batch = Math.max(1, Math.min(1024, Math.round(warm / 20_000)));
  const slices: number[] = [];
  for (let i = 0; i < 5; i++) slices.push(await run(sliceNs));
  const opsPerSec = median(slices);
  return { opsPerSec, spread: (Math.max(...slices) - Math.min(...slices)) / 2 / opsPerSec };
}

function serviceNamed(name: string): Service {
  const s = services.find((x) => x.name === name);
  if (s === undefined) throw new Error(`no service ${name}`);
  return s;
}

function record(s: Student): Record<string, string | null> {
  return { id_student: s.id_student, fullName: s.fullName, id_device: s.id_device, ShowActive: s.ShowActive };
}

async function main(): Promise<void> {
  const data = mainDataset();
  const all = scenarios(data);
  const scenario = (id: string): { body: Buffer; text: string; headers: Readonly<Record<string, string>> } => {
    const s = all.find((x) => x.id === id)!;
    const body = Buffer.from(s.request.body ?? '', 'utf8');
    // Decoded from bytes, as a request's text is: a flat string, not the rope a template builds.
    return { body, text: body.toString('utf8'), headers: s.request.headers };
  };
  const token11 = scenario('token-soap11');
  const token12 = scenario('token-soap12');
  const school11 = scenario('school-soap11');

  const push = buildServiceRoutes(serviceNamed('PushNotificationMobile'), NS);
  const notes = buildServiceRoutes(serviceNamed('NotificationNotes'), NS);
  const table = buildRouteTable(services, NS);
  const soapReq = (routes: ServiceRoutes, r: typeof token11) => () =>
    readSoap(routes, { contentType: r.headers['Content-Type'], soapAction: r.headers['SOAPAction'], body: r.body }, LIMITS);

  const tokenOp = push.byName.get('GetTokenDevice')!;
  const schoolOp = notes.byName.get('GetStudentSchool')!;
  const tokenWriter = push.writers.get(tokenOp)!;
  const schoolWriter = createResultWriter(schoolOp.name, schoolOp.result, NS);
  const small = activeStudents(data, SMALL_SCHOOL).map(record);
  const big = activeStudents(data, BIG_SCHOOL).map(record);

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
  const soapPath = (routes: ServiceRoutes, r: typeof token11) => async () => {
    const read = readSoap(routes, { contentType: r.headers['Content-Type'], soapAction: r.headers['SOAPAction'], body: r.body }, LIMITS);
    if ('error' in read) throw read.error;
    const value = await read.call.op.run(read.call.args, ctx);
    return soapReply(read.version, routes.writers.get(read.call.op)!, value).body;
  };

  // The store over SQLite, next to better-sqlite3 used directly on the same file.
  const dir = mkdtempSync(join(tmpdir(), 'sis-micro-'));
  const file = join(dir, 'micro.sqlite');
  const store: Store = await openStore(`sqlite:${file}`);
  await store.importDataset(data);
  const raw = new BetterSqlite3(file, { readonly: true });
  const tokenSql = 'select "token" from "devices" where "id" = ?';
  const studentsSql =
    'select "id_student", "fullName", "id_device", "ShowActive", "school_base_url" from "students" where "school_base_url" = ? and "ShowActive" = ? order by "seq"';
  const tokenStmt = raw.prepare(tokenSql);
  const studentsStmt = raw.prepare(studentsSql);
  const studentsArrays = raw.prepare(studentsSql).raw(true);

  // Large answers, from memory: the current writer (string, then Buffer) against the prototype.
  // Built on first use, so the other cases do not run with 100,000 records on the heap.
  const lists = new Map<number, Record<string, string | null>[]>();
  const large = (n: number): Record<string, string | null>[] => {
    let list = lists.get(n);
    if (list === undefined) {
      list = makeStudents(`m${n}`, 'x', n, 0).map(record);
      lists.set(n, list);
      if (!current(list).equals(Buffer.concat(chunked(list)))) throw new Error('the writer prototype differs from the writer');
    }
    return list;
  };
  const fields = ['id_student', 'fullName', 'id_device', 'ShowActive'];
  const current = (list: readonly Record<string, string | null>[]): Buffer => {
    const body = schoolWriter.soapBody(list);
    if (isStreamed(body)) throw new Error('a list held whole is never streamed');
    return typeof body === 'string' ? Buffer.from(body, 'utf8') : Buffer.concat(body);
  };
  const chunked = (list: readonly Record<string, string | null>[]): Buffer[] =>
    writeListChunks('GetStudentSchool', NS, 'StudentInfo', fields, list);
  // A list streamed in pages of 1,000, as a long GetStudentSchool answer is: every piece made, none kept.
  const streamed = async (list: readonly Record<string, string | null>[]): Promise<number> => {
    async function* pages(): AsyncGenerator<readonly Record<string, string | null>[]> {
      for (let i = 0; i < list.length; i += 1000) yield list.slice(i, i + 1000);
    }
    const body = schoolWriter.soapBody(pages());
    if (!isStreamed(body)) throw new Error('pages are streamed');
    let bytes = 0;
    for (let pieces = await body.next(); pieces !== null; pieces = await body.next()) for (const p of pieces) bytes += p.length;
    await body.close();
    return bytes;
  };
  const allPages = async (school: string, size: number): Promise<number> => {
    let n = 0;
    for await (const page of store.studentsOfSchoolPages(school, '1', size)) n += page.length;
    return n;
  };

  const cases: Case[] = [
    { group: 'envelope', name: 'saxes alone, no handlers (GetTokenDevice 1.1)', fn: () => new SaxesParser({ xmlns: true, position: true }).write(token11.text).close() },
    { group: 'envelope', name: 'readEnvelope GetTokenDevice (SOAP 1.1)', fn: () => readEnvelope(token11.text, NS, LIMITS) },
    { group: 'envelope', name: 'readEnvelope GetStudentSchool (SOAP 1.1)', fn: () => readEnvelope(school11.text, NS, LIMITS) },
    { group: 'envelope', name: 'readSoap GetTokenDevice (SOAP 1.1)', fn: soapReq(push, token11) },
    { group: 'envelope', name: 'readSoap GetTokenDevice (SOAP 1.2)', fn: soapReq(push, token12) },
    { group: 'envelope', name: 'readSoap GetStudentSchool (SOAP 1.1)', fn: soapReq(notes, school11) },
    { group: 'writer', name: 'soapBody GetTokenDevice (string)', fn: () => tokenWriter.soapBody(TOKEN) },
    { group: 'writer', name: 'httpDocument GetTokenDevice (string)', fn: () => tokenWriter.httpDocument(TOKEN) },
    { group: 'writer', name: `soapBody GetStudentSchool (${small.length} students)`, fn: () => schoolWriter.soapBody(small) },
    { group: 'writer', name: `httpDocument GetStudentSchool (${small.length} students)`, fn: () => schoolWriter.httpDocument(small) },
    { group: 'writer', name: `soapBody GetStudentSchool (${big.length} students)`, fn: () => schoolWriter.soapBody(big) },
    { group: 'writer', name: `soapReply envelope + GetTokenDevice`, fn: () => soapReply(SOAP11, tokenWriter, TOKEN).body },
    { group: 'routing', name: 'buildRouteTable (start-up, all services)', fn: () => buildRouteTable(services, NS) },
    { group: 'routing', name: 'service by file name + operation by SOAPAction', fn: () => table.get('pushnotificationmobile')?.byAction.get(`${NS}GetTokenDevice`) },
    { group: 'routing', name: 'service by file name + operation by path (GET/POST)', fn: () => table.get('notificationnotes')?.byName.get('GetStudentSchool') },
    { group: 'soap path', name: 'read + run + write GetTokenDevice (1.1, memory store)', fn: soapPath(push, token11), async: true },
    { group: 'soap path', name: 'read + run + write GetStudentSchool 2 (1.1, memory store)', fn: soapPath(notes, school11), async: true },
    { group: 'store', name: 'SqlStore.deviceToken (Kysely over better-sqlite3)', fn: () => store.deviceToken('1'), async: true },
    { group: 'store', name: 'better-sqlite3 prepare + get each time (what Kysely does)', fn: () => raw.prepare(tokenSql).get('1') },
    { group: 'store', name: 'better-sqlite3 prepared statement .get', fn: () => tokenStmt.get('1') },
    { group: 'store', name: `SqlStore.studentsOfSchool (${big.length} students)`, fn: () => store.studentsOfSchool(BIG_SCHOOL, '1'), async: true },
    { group: 'store', name: `SqlStore.studentsOfSchoolPages, one page (${big.length} students)`, fn: () => allPages(BIG_SCHOOL, 1000), async: true },
    { group: 'store', name: `SqlStore.studentsOfSchoolPages, snapshot pages of 100 (${big.length} students)`, fn: () => allPages(BIG_SCHOOL, 100), async: true },
    { group: 'store', name: `better-sqlite3 prepared statement .all (${big.length} students)`, fn: () => studentsStmt.all(BIG_SCHOOL, '1') },
    { group: 'store', name: `better-sqlite3 prepared .raw().all, arrays (${big.length} students)`, fn: () => studentsArrays.all(BIG_SCHOOL, '1') },
    { group: 'large', name: 'writer soapBody + Buffer.from (10,000 students)', fn: () => current(large(10_000)) },
    { group: 'large', name: 'prototype: 64 KiB buffers (10,000 students)', fn: () => chunked(large(10_000)) },
    { group: 'large', name: 'streamed soapBody, pages of 1,000 (10,000 students)', fn: () => streamed(large(10_000)), async: true },
    { group: 'large', name: 'writer soapBody + Buffer.from (100,000 students)', fn: () => current(large(100_000)) },
    { group: 'large', name: 'streamed soapBody, pages of 1,000 (100,000 students)', fn: () => streamed(large(100_000)), async: true },
    { group: 'large', name: 'prototype: 64 KiB buffers (100,000 students)', fn: () => chunked(large(100_000)) },
  ];

  process.stdout.write(`Micro-benchmarks, Node ${process.version}, ${seconds} s per case (median of 5 slices after warm-up)\n\n`);
  process.stdout.write('| group | case | ops/s | µs/op | ± |\n|---|---|---:|---:|---:|\n');
  try {
    for (const c of cases) {
      if (filter !== null && !filter.test(`${c.group} ${c.name}`)) continue;
      const r = await measure(c);
      process.stdout.write(
        `| ${c.group} | ${c.name} | ${Math.round(r.opsPerSec).toLocaleString('en-US')} | ${(1e6 / r.opsPerSec).toFixed(2)} | ${Math.round(r.spread * 100)}% |\n`,
      );
    }
  } finally {
    raw.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
  process.stdout.write(`\n(checksum ${sink})\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`micro: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
});
