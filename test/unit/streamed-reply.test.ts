/**
 * writeReply's sending of a streamed body (as a long list is written in pages): chunked, gathered
 * for HTTP/1.0, failures midway, clients that go or stop reading.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { writeReply } from '../../src/http/write-reply.js';
import type { ReplyExtras, ReplyEnd } from '../../src/http/write-reply.js';
import type { Body, Reply, StreamedBody } from '../../src/reply/reply.js';
import { dechunk, parseResponse, rawRequest } from '../helpers/raw-http.js';

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
