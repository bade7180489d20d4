/**
 * The necessary work: for each scenario, only what its answer cannot do without, on the same
 * database as ours. node:http, the body read to its end, the parameter found (a string search in
 * the envelope, URLSearchParams for GET and POST), one prepared node:sqlite statement (AuthCode:
 * its two inserts in one transaction, as ours stores the code and queues its SMS), and the answer
 * ASMX writes, with ASMX's headers, in one write. No routing beyond a Map, no logging, no metrics,
 * no limits: what ours reaches against it is what all the rest costs.
 *
 * Usage: PORT=N node dist/bench/targets/necessary-server.js SQLITE_FILE ROUTES.json
 * NECESSARY_SPIN_US=N adds N µs of pure CPU work (a busy wait) to each answer: what bench/budget.ts
 * weighs ours against (how many µs of extra work a request the throughput of ours corresponds to).
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { DatabaseSync } from 'node:sqlite';
import { xmlText } from '../scenarios/asmx-xml.js';
import {
  authCodeAnswer,
  httpStudents,
  httpTokenAnswer,
  soapEnvelope,
  soapStudents,
  soapTokenAnswer,
} from '../scenarios/expected-answers.js';
import type { StudentFields } from '../scenarios/expected-answers.js';
import type { NecessaryWork } from '../scenarios/scenario.js';

/** The service's default SMS text (SIS_SMS_MESSAGE), stored with each code. */
const SMS_MESSAGE = 'Your verification code is {code}';

/** One scenario's route, by path (`/necessary/<scenario id>`). */
export interface NecessaryRoute {
  readonly work: NecessaryWork;
  readonly contentType: string;
}

/** A parameter's text, or null when the request has none. */
type Params = (name: string) => string | null;
type Handler = (params: Params) => string;

const [file, routesFile] = process.argv.slice(2);
if (file === undefined || routesFile === undefined) throw new Error('usage: necessary-server SQLITE_FILE ROUTES.json');

const db = new DatabaseSync(file, { timeout: 5000 });
// As ours opens it: WAL, and NORMAL sync for the durable write.
db.exec('pragma journal_mode = WAL');
db.exec('pragma synchronous = NORMAL');
const tokenStatement = db.prepare('select token from devices where id = ?');
tokenStatement.setReturnArrays(true);
const tokenOf = (id: string): string | null | undefined => (tokenStatement.get(id) as [string | null] | undefined)?.[0];
const studentsStatement = db.prepare(
  'select id_student, fullName, id_device, ShowActive from students where school_base_url = ? and ShowActive = ? order by seq',
);
const studentsOf = (school: string, active: string): StudentFields[] =>
  studentsStatement.all(school, active) as unknown as StudentFields[];
const insertCode = db.prepare('insert into auth_codes (code, phone, created_at) values (?, ?, ?)');
const insertMessage = db.prepare(
  "insert into outbox (phone, code, message, state, attempts, next_attempt_at, created_at) values (?, ?, ?, 'pending', 0, ?, ?)",
);
const begin = db.prepare('begin');
const commit = db.prepare('commit');
const rollback = db.prepare('rollback');
function storeCode(code: string, phone: string): void {
  const at = new Date().toISOString();
  begin.run();
  try {
    insertCode.run(code, phone, at);
    insertMessage.run(phone, code, SMS_MESSAGE.replace('{code}', code), at, at);
    commit.run();
  } catch (error) {
    if (db.isTransaction) rollback.run();
    throw error;
  }
}

const SPIN_MS = Number(process.env['NECESSARY_SPIN_US'] ?? 0) / 1000;

/** The extra work asked for: the clock read in a loop, no memory touched. */
function spin(): void {
  const until = performance.now() + SPIN_MS;
  while (performance.now() < until);
}

const escapeText = (v: string): string => (/[&<>]/.test(v) ? xmlText(v) : v);

function required(params: Params, name: string): string {
  const v = params(name);
  if (v === null) throw new Error(`no ${name} in the request`);
  return v;
}

/** The answer cut around the token, once: per request only the token goes between. */
function tokenHandler(work: NecessaryWork): Handler {
  const MARK = '\u0000';
  const whole = work.soapNs === undefined ? httpTokenAnswer(MARK) : soapTokenAnswer(work.soapNs, MARK);
  const [head, tail] = whole.split(MARK) as [string, string];
  return (params) => {
    const token = tokenOf(required(params, 'id'));
    if (token === undefined || token === null) throw new Error('no token for that id');
    return head + escapeText(token) + tail;
  };
}

function schoolHandler(work: NecessaryWork): Handler {
  const ns = work.soapNs;
  return (params) => {
    const school = required(params, 'school_base_url');
    const flag = required(params, 'show_active');
    // A char is its UTF-16 code on the SOAP wire, the character itself in GET and POST.
    const rows = studentsOf(school, ns === undefined ? flag : String.fromCharCode(Number(flag)));
    return ns === undefined ? httpStudents(rows) : soapEnvelope(ns, soapStudents(rows));
  };
}

function handlerOf(work: NecessaryWork): Handler {
  if (work.op === 'token') return tokenHandler(work);
  if (work.op === 'school') return schoolHandler(work);
  const done = authCodeAnswer(work.soapNs ?? '');
  return (params) => {
    storeCode(required(params, 'code'), required(params, 'phone'));
    return done;
  };
}

/** An element's text in the envelope by plain search: the request is known, not validated. */
function soapParams(xml: string): Params {
  return (name) => {
    const open = xml.indexOf(`<${name}>`);
    if (open < 0) return null;
    const from = open + name.length + 2;
    const end = xml.indexOf(`</${name}>`, from);
    if (end < 0) return null;
    const raw = xml.slice(from, end);
    return raw.includes('&') ? decodeEntities(raw) : raw;
  };
}

function decodeEntities(v: string): string {
  return v
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, '&');
}

function formParams(text: string): Params {
  const p = new URLSearchParams(text);
  return (name) => p.get(name);
}

interface Route {
  readonly handle: Handler;
  readonly from: NecessaryWork['from'];
  readonly headers: { 'Cache-Control': string; 'Content-Type': string };
}

const routes = new Map<string, Route>();
for (const [path, r] of Object.entries(JSON.parse(readFileSync(routesFile, 'utf8')) as Record<string, NecessaryRoute>))
  routes.set(path, {
    handle: handlerOf(r.work),
    from: r.work.from,
    headers: { 'Cache-Control': 'private, max-age=0', 'Content-Type': r.contentType },
  });

function answer(res: ServerResponse, route: Route, query: string, body: string): void {
  if (SPIN_MS > 0) spin();
  let text: string;
  try {
    text = route.handle(route.from === 'soap' ? soapParams(body) : formParams(route.from === 'query' ? query : body));
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    res.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' }).end(message);
    return;
  }
  res.writeHead(200, { ...route.headers, 'Content-Length': Buffer.byteLength(text, 'utf8') });
  res.end(text, 'utf8');
}

const server = createServer((req, res) => {
  const url = req.url ?? '';
  const q = url.indexOf('?');
  const route = routes.get(q < 0 ? url : url.slice(0, q));
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.once('end', () => {
    if (route === undefined) {
      res.writeHead(404, { 'Content-Length': 0 }).end();
      return;
    }
    const body = chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8');
    answer(res, route, q < 0 ? '' : url.slice(q + 1), body);
  });
});
server.listen(Number(process.env['PORT'] ?? 0), '127.0.0.1');
process.once('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
  db.close();
});
