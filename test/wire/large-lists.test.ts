/**
 * GetStudentSchool for a large school over real HTTP, on SQLite and PostgreSQL: streamed
 * (chunked) over all four bindings with the bytes of the answer built whole, small answers and
 * HTTP/1.0 callers still under Content-Length, one snapshot while a slow client reads and an
 * import --replace commits, and the snapshot given back when a client goes away.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { BackgroundStore } from '../../src/store/open/background-store.js';
import { openStore } from '../../src/store/open/open-store.js';
import type { SqlStore } from '../../src/store/sql/sql-store.js';
import type { Dataset, Store, StudentRecord } from '../../src/store/store.js';
import { eventually } from '../helpers/eventually.js';
import { dechunk, parseResponse, rawRequest } from '../helpers/raw-http.js';
import type { RawRequest, RawResponse } from '../helpers/raw-http.js';
import { adminClient, cleanupTargets, postgresTarget, storeTargets } from '../helpers/store-targets.js';
import type { FreshDatabase } from '../helpers/store-targets.js';
import { startTestServer } from '../helpers/test-server.js';
import type { TestServer } from '../helpers/test-server.js';

const BIG = 'http://big.example';
const SMALL = 'http://small.example';
const BINDINGS = ['soap11', 'soap12', 'httpget', 'httppost'] as const;
type Binding = (typeof BINDINGS)[number];

/** Students with about 1 KiB of name each: 5,000 of them are more than socket buffers hold. */
function students(n: number, tag: string, school = BIG): StudentRecord[] {
  const filler = ' Ångström & <Sons> 😀'.repeat(45);
  return Array.from({ length: n }, (_, i) => ({
    id_student: `${tag}-${String(i + 1).padStart(5, '0')}`,
    fullName: `${tag} ${i + 1}${filler}`,
    id_device: i % 13 === 0 ? null : `dev-${i}`,
    ShowActive: i % 17 === 0 ? '0' : '1',
    school_base_url: school,
  }));
}

const dataset = (): Dataset => ({ students: [...students(5000, 'a'), ...students(3, 's', SMALL)] });

function request(binding: Binding, school: string): RawRequest {
  const url = encodeURIComponent(school);
  const envelope = (ns: string, active: string): string =>
    `<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="${ns}"><soap:Body><GetStudentSchool xmlns="http://tempuri.org/"><school_base_url>${school}</school_base_url><show_active>${active}</show_active></GetStudentSchool></soap:Body></soap:Envelope>`;
  switch (binding) {
    case 'soap11':
      return {
        method: 'POST',
        path: '/NotificationNotes.asmx',
        headers: [
          ['Content-Type', 'text/xml; charset=utf-8'],
          ['SOAPAction', '"http://tempuri.org/GetStudentSchool"'],
        ],
        body: envelope('http://schemas.xmlsoap.org/soap/envelope/', '49'),
      };
    case 'soap12':
      return {
        method: 'POST',
        path: '/NotificationNotes.asmx',
        headers: [
          ['Content-Type', 'application/soap+xml; charset=utf-8; action="http://tempuri.org/GetStudentSchool"'],
        ],
        body: envelope('http://www.w3.org/2003/05/soap-envelope', '49'),
      };
    case 'httpget':
      return { method: 'GET', path: `/NotificationNotes.asmx/GetStudentSchool?school_base_url=${url}&show_active=1` };
    case 'httppost':
      return {
        method: 'POST',
        path: '/NotificationNotes.asmx/GetStudentSchool',
        headers: [['Content-Type', 'application/x-www-form-urlencoded']],
        body: `school_base_url=${url}&show_active=1`,
      };
  }
}

const get = (server: TestServer, binding: Binding, school = BIG, version?: '1.0'): Promise<RawResponse> =>
  rawRequest(
    server.url,
    { ...request(binding, school), ...(version ? { version } : {}) },
    { chunked: true, timeoutMs: 30_000 },
  );

/** The store behind a test server, to look at its snapshot reads. */
async function sqlStoreOf(server: TestServer): Promise<SqlStore> {
  const store: Store = server.app.store;
  return store instanceof BackgroundStore ? store.opened : (store as SqlStore);
}

/** Sends a request, reads the head and a little more, then stops reading (returns the socket). */
function startSlowRead(
  server: TestServer,
  binding: Binding,
): Promise<{ received: Buffer[]; finish(): Promise<Buffer>; cut(): void }> {
  const { port } = new URL(server.url);
  const req = request(binding, BIG);
  const body = req.body === undefined ? Buffer.alloc(0) : Buffer.from(req.body);
  const head = [
    `${req.method} ${req.path} HTTP/1.1`,
    'Host: x',
    ...(req.headers ?? []).map(([n, v]) => `${n}: ${v}`),
    `Content-Length: ${body.length}`,
    'Connection: close',
    '',
    '',
  ];
  return new Promise((resolve, reject) => {
    const received: Buffer[] = [];
    const socket = connect(Number(port), '127.0.0.1', () =>
      socket.write(Buffer.concat([Buffer.from(head.join('\r\n')), body])),
    );
    const closed = new Promise<void>((done) => socket.on('close', () => done()));
    socket.on('error', () => undefined);
    socket.once('data', (chunk: Buffer) => {
      received.push(chunk);
      socket.pause();
      resolve({
        received,
        async finish() {
          socket.on('data', (c: Buffer) => received.push(c));
          socket.resume();
          await closed;
          return Buffer.concat(received);
        },
        cut: () => socket.destroy(),
      });
    });
    socket.on('close', () => reject(new Error('closed before any answer')));
  });
}

after(cleanupTargets);

for (const target of storeTargets) {
  describe(`large GetStudentSchool answers on ${target.name}`, { skip: target.skip ?? false }, () => {
    let db: FreshDatabase;
    let streaming: TestServer;
    let paged: TestServer;
    let whole: TestServer;
    before(async () => {
      db = await target.fresh();
      const env = { SIS_DATABASE_URL: db.url, SIS_DATABASE_POOL_SIZE: '4' };
      // Default pages (1,000 students); pages of 100; and lists always held whole: the reference.
      streaming = await startTestServer({ env, dataset: dataset() });
      paged = await startTestServer({ env: { ...env, SIS_LIST_PAGE_ROWS: '100' } });
      whole = await startTestServer({ env: { ...env, SIS_LIST_PAGE_ROWS: '0' } });
    });
    after(async () => {
      await Promise.all([streaming, paged, whole].map((s) => s?.close()));
    });

    for (const binding of BINDINGS) {
      it(`streams a school of 5,000 over ${binding}: chunked, the bytes of the answer built whole`, async () => {
        const expected = await get(whole, binding);
        assert.equal(expected.status, 200);
        assert.equal(expected.headers.get('transfer-encoding'), undefined);
        assert.equal(expected.headers.get('content-length'), String(expected.body.length));
        assert.ok(expected.body.length > 5_000_000, `${expected.body.length} bytes`);
        for (const server of [streaming, paged]) {
          const res = await get(server, binding);
          assert.equal(res.status, 200);
          assert.equal(res.headers.get('transfer-encoding'), 'chunked');
          assert.equal(res.headers.get('content-length'), undefined);
          assert.equal(res.headers.get('content-type'), expected.headers.get('content-type'));
          assert.equal(res.headers.get('cache-control'), 'private, max-age=0');
          assert.ok(res.body.equals(expected.body), 'the same bytes once de-chunked');
        }
      });
    }

    it('answers a small school whole, with Content-Length, over every binding', async () => {
      for (const binding of BINDINGS) {
        const res = await get(streaming, binding, SMALL);
        assert.equal(res.status, 200);
        assert.equal(res.headers.get('transfer-encoding'), undefined);
        assert.equal(res.headers.get('content-length'), String(res.body.length));
        assert.ok(res.body.equals((await get(whole, binding, SMALL)).body));
        assert.equal(res.body.toString().match(/<id_student>/g)?.length, 2, 'the two active students');
      }
    });

    it('answers an HTTP/1.0 caller with Content-Length, never chunked', async () => {
      for (const binding of ['soap11', 'httpget'] as const) {
        const res = await get(paged, binding, BIG, '1.0');
        assert.equal(res.status, 200);
        assert.equal(res.headers.get('transfer-encoding'), undefined);
        assert.equal(res.headers.get('content-length'), String(res.body.length));
        assert.ok(res.body.equals((await get(whole, binding)).body));
      }
    });

    it('gives the snapshot back when clients go away midway, and serves the next in full', async () => {
      const store = await sqlStoreOf(paged);
      const expected = (await get(whole, 'httpget')).body;
      for (let round = 0; round < 3; round++) {
        // More than the snapshots allowed at once: the last wait for the first to be cut.
        await Promise.all(
          Array.from({ length: 6 }, (_, i) => startSlowRead(paged, BINDINGS[i % 4]!).then((r) => r.cut())),
        );
        await eventually(() => assert.equal(store.snapshotReads().open, 0));
      }
      assert.equal(store.snapshotReads().waiting, 0);
      // SQLite keeps at most 4 reader connections open, whatever came and went.
      assert.ok(store.snapshotReads().connections <= 4, JSON.stringify(store.snapshotReads()));
      const res = await get(paged, 'httpget');
      assert.equal(res.headers.get('transfer-encoding'), 'chunked');
      assert.ok(res.body.equals(expected));
    });

    it('reads one snapshot while a slow client reads and an import --replace commits', async () => {
      const store = await sqlStoreOf(paged);
      const before = await get(whole, 'soap11');
      const reading = await startSlowRead(paged, 'soap11');
      // The client takes nothing more: the server waits with most pages still unread.
      await new Promise((r) => setTimeout(r, 200));
      assert.equal(store.snapshotReads().open, 1, 'the answer is still being read');
      // Another connection replaces every student: some again in another order, new ones after.
      const replacement = [
        ...students(5000, 'a')
          .reverse()
          .filter((_, i) => i % 4 !== 0),
        ...students(1500, 'b'),
      ];
      const other = await openStore(db.url, { poolSize: 2 });
      try {
        await other.importDataset({ students: replacement }, { replace: true });
        const afterImport = await get(whole, 'soap11');
        assert.ok(!afterImport.body.equals(before.body), 'the import changed the answer');
        assert.equal(store.snapshotReads().open, 1, 'the import committed while the answer was being read');
        const res = parseResponse(await reading.finish(), false, true);
        assert.equal(res.headers.get('transfer-encoding'), 'chunked');
        assert.ok(res.body.equals(before.body), 'every student of the state before the import, once, in order');
        const now = await get(paged, 'soap11');
        assert.ok(now.body.equals(afterImport.body), 'the next answer is the state after it');
      } finally {
        await other.importDataset(dataset(), { replace: true });
        await other.close();
      }
    });
  });
}

describe('a large answer whose database connection dies midway', { skip: postgresTarget.skip ?? false }, () => {
  it('is cut (the client sees a truncated answer, never a short well-formed list), and the next is served', async () => {
    const db = await postgresTarget.fresh();
    const app = `sis_cut_${process.pid}`;
    const logged: Record<string, unknown>[] = [];
    const logDestination = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString('utf8').split('\n'))
          if (line !== '') logged.push(JSON.parse(line) as Record<string, unknown>);
        done();
      },
    });
    const server = await startTestServer({
      env: { SIS_DATABASE_URL: `${db.url}&application_name=${app}`, SIS_LIST_PAGE_ROWS: '100', LOG_LEVEL: 'info' },
      dataset: dataset(),
      logDestination,
    });
    try {
      const reading = await startSlowRead(server, 'httpget');
      const admin = await adminClient();
      await eventually(async () => {
        const held = await admin.query(
          `select pid from pg_stat_activity where application_name = $1 and state like 'idle in transaction%'`,
          [app],
        );
        assert.equal(held.rows.length, 1, 'the snapshot is held by one connection');
        await admin.query('select pg_terminate_backend($1)', [(held.rows[0] as { pid: number }).pid]);
      });
      const raw = await reading.finish();
      const head = parseResponse(raw, true);
      assert.equal(head.status, 200);
      assert.equal(head.headers.get('transfer-encoding'), 'chunked');
      assert.throws(() => dechunk(raw.subarray(raw.indexOf('\r\n\r\n') + 4)), /cut short/);
      // The request's log line says so, at error level, with the cause and the request's identity.
      await eventually(() => {
        const line = logged.find((l) => l['msg'] === 'streamed answer failed midway; connection cut');
        assert.ok(line !== undefined, 'logged');
        assert.equal(line['level'], 50);
        assert.equal(line['operation'], 'GetStudentSchool');
        assert.equal(line['binding'], 'httpget');
        assert.ok(line['err'] !== undefined && typeof line['requestId'] === 'string');
      });
      const store = await sqlStoreOf(server);
      await eventually(() => assert.equal(store.snapshotReads().open, 0));
      const next = await get(server, 'httpget');
      assert.equal(next.status, 200);
      assert.equal(next.body.toString().match(/<StudentInfo>/g)?.length, 5000 - Math.ceil(5000 / 17));
    } finally {
      await server.close();
    }
  });
});
