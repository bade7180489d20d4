/**
 * Long lists as pages, without a database: the operation's settling of pages, the writer's
 * streamed bodies (the same bytes as a list written whole) and writeReply's sending of them
 * (chunked, HTTP/1.0 gathered, failures midway, clients that go or stop reading).
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { httpReply, soapReply } from '../../src/bindings/replies.js';
import { SOAP11, SOAP12 } from '../../src/bindings/soap-version.js';
import type { Reply } from '../../src/bindings/types.js';
import { isListPages, settleList } from '../../src/contract/list-pages.js';
import type { ListPages, StructValue } from '../../src/contract/types.js';
import { writeReply } from '../../src/http/write-reply.js';
import type { ReplyExtras, ReplyEnd } from '../../src/http/write-reply.js';
import { isStreamed } from '../../src/xml/chunked-text.js';
import type { Body, StreamedBody } from '../../src/xml/chunked-text.js';
import { createResultWriter } from '../../src/xml/result-writer.js';
import { dechunk, parseResponse, rawRequest } from '../helpers/raw-http.js';

type Item = StructValue | null;
const NS = 'http://tempuri.org/';
const item = { name: 'StudentInfo', fields: ['id_student', 'fullName', 'id_device', 'ShowActive'] } as const;
const writer = createResultWriter('GetStudentSchool', { kind: 'list', item }, NS);

const students = (n: number): StructValue[] =>
  Array.from({ length: n }, (_, i) => ({
    id_student: String(i),
    fullName: i % 7 === 0 ? `O'Brien & <Sons> ${i}` : i % 5 === 0 ? `Zoë 😀 ${i}` : i % 11 === 0 ? '' : `Student ${i}`,
    id_device: i % 13 === 0 ? null : `dev-${i}`,
    ShowActive: '1',
  }));

/** Pages over a list, recording whether the source was released. */
function pagesOf(
  list: readonly Item[],
  size: number,
  fail?: Error,
): { pages: ListPages; released: () => boolean; reads: () => number } {
  let released = false;
  let reads = 0;
  async function* generate(): AsyncGenerator<readonly Item[]> {
    try {
      for (let i = 0; i < list.length; i += size) {
        reads++;
        if (fail !== undefined && i > 0) throw fail;
        yield list.slice(i, i + size);
      }
    } finally {
      released = true;
    }
  }
  const source = generate();
  return { pages: { [Symbol.asyncIterator]: () => source }, released: () => released, reads: () => reads };
}

async function bytesOf(body: Body | null): Promise<Buffer> {
  if (body === null) return Buffer.alloc(0);
  if (typeof body === 'string') return Buffer.from(body, 'utf8');
  if (!isStreamed(body)) return Buffer.concat(body);
  const out: Buffer[] = [];
  try {
    for (let pieces = await body.next(); pieces !== null; pieces = await body.next()) out.push(...pieces);
  } finally {
    await body.close();
  }
  return Buffer.concat(out);
}

describe('settleList', () => {
  it('answers a list that ends within its first page whole, and an empty one as []', async () => {
    const one = pagesOf(students(3), 5);
    const settled = await settleList(one.pages);
    assert.ok(!isListPages(settled));
    assert.deepEqual(settled, students(3));
    assert.ok(one.released());
    assert.deepEqual(await settleList(pagesOf([], 5).pages), []);
  });

  it('keeps a longer list as pages, replayed from the start', async () => {
    const many = pagesOf(students(12), 5);
    const settled = await settleList(many.pages);
    assert.ok(isListPages(settled));
    assert.equal(many.reads(), 2, 'two pages read to decide');
    const seen: Item[] = [];
    for await (const page of settled) seen.push(...page);
    assert.deepEqual(seen, students(12));
    assert.ok(many.released());
  });

  it('releases the source when the pages are given up before being read', async () => {
    const many = pagesOf(students(12), 5);
    const settled = await settleList(many.pages);
    assert.ok(isListPages(settled) && !many.released());
    await settled[Symbol.asyncIterator]().return?.();
    assert.ok(many.released());
  });

  it('rejects when one of the first two pages fails, so the failure is still a fault', async () => {
    const failing = pagesOf(students(12), 5, new Error('disk on fire'));
    await assert.rejects(settleList(failing.pages), /disk on fire/);
    assert.ok(failing.released());
  });
});

describe('streamed list bodies', () => {
  for (const n of [1, 5, 6, 999, 5000]) {
    it(`write ${n} students in pages with the bytes of the list written whole (SOAP 1.1, 1.2, HTTP)`, async () => {
      const list = students(n);
      for (const size of [1, 5, 1000]) {
        for (const version of [SOAP11, SOAP12]) {
          const whole = await bytesOf(soapReply(version, writer, list).body);
          const streamed = soapReply(version, writer, pagesOf(list, size).pages).body;
          assert.ok(isStreamed(streamed));
          assert.ok((await bytesOf(streamed)).equals(whole), `${version.binding}, pages of ${size}`);
        }
        const whole = await bytesOf(httpReply(writer, list).body);
        assert.ok(
          (await bytesOf(httpReply(writer, pagesOf(list, size).pages).body)).equals(whole),
          `HTTP, pages of ${size}`,
        );
      }
    });
  }

  it('write a list found empty as the empty list, and null items as xsi:nil', async () => {
    const emptyPages = (): ListPages => ({
      async *[Symbol.asyncIterator]() {
        yield [];
      },
    });
    assert.ok(
      (await bytesOf(soapReply(SOAP11, writer, emptyPages()).body)).equals(
        await bytesOf(soapReply(SOAP11, writer, []).body),
      ),
    );
    assert.ok((await bytesOf(httpReply(writer, emptyPages()).body)).equals(await bytesOf(httpReply(writer, []).body)));
    const withNull: Item[] = [students(1)[0]!, null, {}];
    assert.ok(
      (await bytesOf(soapReply(SOAP11, writer, pagesOf(withNull, 1).pages).body)).equals(
        await bytesOf(soapReply(SOAP11, writer, withNull).body),
      ),
    );
    assert.ok(
      (await bytesOf(httpReply(writer, pagesOf(withNull, 2).pages).body)).equals(
        await bytesOf(httpReply(writer, withNull).body),
      ),
    );
  });

  it('release their pages on close, read or not', async () => {
    const unread = pagesOf(students(20), 5);
    // Started, as settleList leaves it: a generator not started has nothing to release.
    const source = unread.pages[Symbol.asyncIterator]();
    await source.next();
    const body = soapReply(SOAP11, writer, { [Symbol.asyncIterator]: () => source }).body as StreamedBody;
    await body.close();
    assert.ok(unread.released());
    const halfRead = pagesOf(students(20), 5);
    const half = httpReply(writer, halfRead.pages).body as StreamedBody;
    await half.next();
    await half.close();
    assert.ok(halfRead.released());
    assert.equal(halfRead.reads(), 1);
  });
});

/** A streamed body of `pieces` 64 KiB pieces (endless when null), failing after `failAfter` if set. */
function fakeBody(
  pieces: number | null,
  failAfter?: number,
): StreamedBody & { readonly closed: boolean; readonly served: number } {
  let served = 0;
  let closed = false;
  return {
    get closed() {
      return closed;
    },
    get served() {
      return served;
    },
    async next() {
      await new Promise((r) => setImmediate(r));
      if (failAfter !== undefined && served >= failAfter) throw new Error('connection to the database lost');
      if (pieces !== null && served >= pieces) return null;
      served++;
      return [Buffer.alloc(64 * 1024, 0x61 + (served % 26))];
    },
    async close() {
      closed = true;
    },
  };
}

describe('writeReply with a streamed body', () => {
  let server: Server;
  let url: string;
  let next: { body: Body; extras?: Partial<ReplyExtras> } | null = null;
  const ends: ReplyEnd[] = [];
  before(async () => {
    server = createServer((_req, res) => {
      const { body, extras } = next!;
      const reply: Reply = { status: 200, contentType: 'text/xml; charset=utf-8', body, invoked: true };
      writeReply(res, reply, {
        requestId: 'r1',
        workerPid: null,
        closeAfter: false,
        onEnd: (end) => ends.push(end),
        ...extras,
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const endOf = async (): Promise<ReplyEnd> => {
    for (let i = 0; i < 200 && ends.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(ends.length, 1, 'told once how the stream ended');
    return ends.shift()!;
  };

  it('(an answer held whole is sent under Content-Length, and told as sent before writeReply returns)', async () => {
    next = { body: 'whole' };
    const res = await rawRequest(url, { method: 'GET', path: '/' });
    assert.equal(res.headers.get('content-length'), '5');
    assert.deepEqual(ends.splice(0), [{ kind: 'sent' }]);
  });

  it('sends it chunked to an HTTP/1.1 client, without Content-Length', async () => {
    const body = fakeBody(20);
    next = { body };
    const res = await rawRequest(url, { method: 'GET', path: '/' }, { chunked: true });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('transfer-encoding'), 'chunked');
    assert.equal(res.headers.get('content-length'), undefined);
    assert.equal(res.headers.get('cache-control'), 'private, max-age=0');
    assert.equal(res.body.length, 20 * 64 * 1024);
    assert.deepEqual(await endOf(), { kind: 'sent' });
    assert.ok(body.closed);
  });

  it('gathers it under Content-Length for an HTTP/1.0 client', async () => {
    const body = fakeBody(5);
    next = { body };
    const res = await rawRequest(url, { method: 'GET', path: '/', version: '1.0' });
    assert.equal(res.headers.get('transfer-encoding'), undefined);
    assert.equal(res.headers.get('content-length'), String(5 * 64 * 1024));
    assert.equal(res.body.length, 5 * 64 * 1024);
    assert.deepEqual(await endOf(), { kind: 'sent' });
    assert.ok(body.closed);
  });

  it('cuts the connection when reading fails midway: the client sees a truncated answer', async () => {
    const body = fakeBody(null, 3);
    next = { body };
    const raw = await rawBytes(url);
    // The status and head went out before the failure; the body stops without its last chunk.
    const head = parseResponse(raw, true);
    assert.equal(head.status, 200);
    assert.equal(head.headers.get('transfer-encoding'), 'chunked');
    assert.throws(() => dechunk(raw.subarray(raw.indexOf('\r\n\r\n') + 4)), /cut short/);
    const end = await endOf();
    assert.equal(end.kind, 'failed');
    assert.match(String((end as { error: unknown }).error), /database lost/);
    assert.ok(body.closed);
  });

  it('stops reading and releases the body when the client goes away', async () => {
    const body = fakeBody(null);
    next = { body };
    await new Promise<void>((resolve, reject) => {
      const { port } = new URL(url);
      const socket = connect(Number(port), '127.0.0.1', () => socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n'));
      socket.once('data', () => {
        socket.destroy();
        resolve();
      });
      socket.on('error', reject);
    });
    assert.deepEqual(await endOf(), { kind: 'client-gone' });
    assert.ok(body.closed);
    const served = body.served;
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(body.served, served, 'nothing more is read');
  });

  it('cuts a client that stops reading once the stall time has passed', async () => {
    const body = fakeBody(null);
    next = { body, extras: { stallTimeoutMs: 200 } };
    const { port } = new URL(url);
    const socket = connect(Number(port), '127.0.0.1', () => socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n'));
    socket.pause();
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    socket.on('error', () => undefined);
    assert.deepEqual(await endOf(), { kind: 'stalled' });
    assert.ok(body.closed);
    socket.resume();
    await closed;
  });
});

/** Every byte the server sends on one request, until it closes the connection. */
function rawBytes(url: string): Promise<Buffer> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = connect(Number(port), '127.0.0.1', () => socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n'));
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', (err: NodeJS.ErrnoException) => (err.code === 'ECONNRESET' ? undefined : reject(err)));
    socket.on('close', () => resolve(Buffer.concat(chunks)));
  });
}
