/**
 * Hostile bodies and connections, each sent to a real server over a socket (size limits, chunked
 * bodies, short and slow clients, clients gone mid-body, huge headers, many form fields, __proto__
 * names): the answer is checked, and so is that the server still serves the next request.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { describe, it } from 'node:test';
import { eventually } from '../helpers/eventually.js';
import { envelope, hostileServer } from '../helpers/hostile-server.js';
import { rawRequest } from '../helpers/raw-http.js';

describe('hostile input: bodies and connections', () => {
  const { server, soap, stillServes } = hostileServer();

  it('a body over the limit is refused from its declared length without being read', async () => {
    const { status, headers, body, elapsed } = await partialBody(server.url, 50 * 1024 * 1024, 64 * 1024);
    assert.equal(status, 500);
    assert.equal(headers.get('connection'), 'close');
    assert.match(
      body,
      /<faultcode>soap:Server<\/faultcode><faultstring>There was an exception running the extensions specified in the config file\. ---&gt; Maximum request length exceeded\.<\/faultstring>/,
    );
    assert.ok(elapsed < 1000, `answered in ${elapsed} ms`);
    await stillServes();
  });

  it('a chunked body that grows past the limit is cut off as it does', async () => {
    const chunk = Buffer.alloc(256 * 1024, 0x20);
    const res = await rawRequest(server.url, {
      method: 'POST',
      path: '/PushNotificationMobile.asmx/GetTokenDevice',
      headers: [
        ['Content-Type', 'application/x-www-form-urlencoded'],
        ['Transfer-Encoding', 'chunked'],
      ],
      body: Buffer.concat([
        ...Array.from({ length: 20 }, () =>
          Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]),
        ),
        Buffer.from('0\r\n\r\n'),
      ]),
    });
    assert.equal(res.status, 500);
    assert.equal(res.headers.get('content-type'), 'text/plain; charset=utf-8');
    assert.equal(res.body.toString(), 'Maximum request length exceeded.\r\n');
    await stillServes();
  });

  it('a Content-Length that promises more than is sent times out', async () => {
    const started = Date.now();
    const { status } = await partialBody(server.url, 5000, 100, { waitForClose: true });
    assert.ok(status === 408 || status === 0, `status ${status}`);
    assert.ok(Date.now() - started < 6000);
    await stillServes();
  });

  it('a client that goes away mid-body is let go: nothing stays in flight, and the server still serves', async () => {
    for (let i = 0; i < 20; i++) {
      await new Promise<void>((resolve, reject) => {
        const socket = connect(Number(new URL(server.url).port), '127.0.0.1', () => {
          socket.write(
            `POST /PushNotificationMobile.asmx HTTP/1.1\r\nHost: x\r\nContent-Type: text/xml; charset=utf-8\r\nSOAPAction: "http://tempuri.org/GetTokenDevice"\r\nContent-Length: 500\r\n\r\n<?xml version="1.0"?>`,
          );
          setTimeout(() => socket.destroy(), 20);
        });
        socket.on('close', () => resolve());
        socket.on('error', reject);
      });
    }
    await eventually(async () => {
      const metrics = await rawRequest(server.url, { method: 'GET', path: '/metrics' });
      assert.match(metrics.body.toString(), /^sis_requests_in_flight 0$/m);
    });
    await stillServes();
  });

  it('a client sending one byte a second is timed out', async () => {
    const started = Date.now();
    const closedAfter = await slowClient(server.url);
    assert.ok(closedAfter < 5000, `connection closed after ${closedAfter} ms`);
    assert.ok(Date.now() - started < 6000);
    await stillServes();
  });

  it('headers past the limit get 431', async () => {
    const res = await rawRequest(server.url, {
      method: 'GET',
      path: '/PushNotificationMobile.asmx/GetTokenDevice?id=1',
      headers: [['X-Big', 'x'.repeat(64 * 1024)]],
    });
    assert.equal(res.status, 431);
    await stillServes();
  });

  it('thousands of form fields get a clear error', async () => {
    const form = Array.from({ length: 50_000 }, (_, i) => `f${i}=1`).join('&') + '&id=1';
    const res = await rawRequest(server.url, {
      method: 'POST',
      path: '/PushNotificationMobile.asmx/GetTokenDevice',
      headers: [['Content-Type', 'application/x-www-form-urlencoded']],
      body: form,
    });
    assert.equal(res.status, 500);
    assert.equal(res.body.toString(), 'The request has more than 1000 form or query fields.\r\n');
    await stillServes();
  });

  it('__proto__ and constructor as element and parameter names pollute nothing', async () => {
    const res = await soap(
      envelope('<__proto__>x</__proto__><constructor>y</constructor><prototype>z</prototype><id>1</id>'),
    );
    assert.equal(res.status, 200);
    assert.match(res.body.toString(), /tok-AAA-111/);
    const get = await rawRequest(server.url, {
      method: 'GET',
      path: '/PushNotificationMobile.asmx/GetTokenDevice?__proto__=x&constructor=y&__proto__[polluted]=1&id=1',
    });
    assert.equal(get.status, 200);
    const post = await rawRequest(server.url, {
      method: 'POST',
      path: '/PushNotificationMobile.asmx/__proto__',
      headers: [['Content-Type', 'application/x-www-form-urlencoded']],
      body: 'id=1',
    });
    assert.equal(post.status, 500);
    assert.equal(post.body.toString(), '__proto__ Web Service method name is not valid.\r\n');
    const probe: Record<string, unknown> = {};
    assert.equal(probe['polluted'], undefined);
    assert.equal(probe['x'], undefined);
    assert.equal(Object.prototype.toString.call(probe), '[object Object]');
    await stillServes();
  });
});

/** Sends headers declaring `declared` bytes but only `sent` of them; reads what comes back. */
function partialBody(
  url: string,
  declared: number,
  sent: number,
  opts: { waitForClose?: boolean } = {},
): Promise<{ status: number; headers: Map<string, string>; body: string; elapsed: number }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = connect(Number(port), hostname);
    let data = '';
    const finish = (): void => {
      const end = data.indexOf('\r\n\r\n');
      const head = end < 0 ? '' : data.slice(0, end);
      const lines = head.split('\r\n');
      const headers = new Map(
        lines
          .slice(1)
          .map(
            (l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()] as [string, string],
          ),
      );
      resolve({
        status: Number(lines[0]?.split(' ')[1] ?? 0),
        headers,
        body: end < 0 ? '' : data.slice(end + 4),
        elapsed: Date.now() - started,
      });
    };
    socket.on('connect', () => {
      socket.write(
        `POST /PushNotificationMobile.asmx HTTP/1.1\r\nHost: ${hostname}\r\nContent-Type: text/xml; charset=utf-8\r\nSOAPAction: "http://tempuri.org/GetTokenDevice"\r\nContent-Length: ${declared}\r\n\r\n`,
      );
      socket.write(Buffer.alloc(sent, 0x20));
    });
    socket.on('data', (c: Buffer) => {
      data += c.toString('utf8');
      if (!opts.waitForClose && data.includes('\r\n\r\n') && data.includes('</soap:Envelope>')) {
        socket.destroy();
        finish();
      }
    });
    socket.on('close', finish);
    socket.on('error', reject);
    setTimeout(() => socket.destroy(), 8000);
  });
}

/** Writes a request one byte a second; resolves with how long the server kept the socket open. */
function slowClient(url: string): Promise<number> {
  const { hostname, port } = new URL(url);
  const request = `GET /PushNotificationMobile.asmx/GetTokenDevice?id=1 HTTP/1.1\r\nHost: ${hostname}\r\nX-Slow: ${'y'.repeat(30)}\r\n\r\n`;
  return new Promise((resolve) => {
    const started = Date.now();
    const socket = connect(Number(port), hostname);
    let i = 0;
    const timer = setInterval(() => {
      if (i < request.length && socket.writable) socket.write(request[i++]!);
    }, 1000);
    const done = (): void => {
      clearInterval(timer);
      resolve(Date.now() - started);
    };
    socket.on('data', () => undefined);
    socket.on('close', done);
    socket.on('error', () => undefined);
    setTimeout(() => socket.destroy(), 10_000);
  });
}
