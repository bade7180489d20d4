/**
 * HTTP/1.1 framing as RFC 9112 asks, on a real server: a request with two Host headers is a 400
 * (which one would the WSDL name?), an absolute-form target is served like its path with its
 * authority as the host, and CONNECT is answered (405, Allow) rather than the connection closed.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { rawRequest } from '../helpers/raw-http.js';
import { startTestServer } from '../helpers/test-server.js';
import type { TestServer } from '../helpers/test-server.js';

describe('HTTP framing (RFC 9112)', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ env: { SIS_DEMO_DATA: 'true' } });
  });
  after(() => server.close());

  it('answers a request with more than one Host header 400', async () => {
    const host = new URL(server.url).host;
    for (const hosts of [
      [host, 'evil.example'],
      [host, host],
    ]) {
      const res = await rawRequest(server.url, {
        method: 'GET',
        path: '/NotificationNotes.asmx?WSDL',
        headers: hosts.map((h) => ['Host', h] as const),
      });
      assert.equal(res.status, 400, hosts.join(' + '));
      assert.match(res.body.toString(), /one Host header/);
      assert.equal(res.headers.get('connection'), 'close');
    }
    assert.equal((await rawRequest(server.url, { method: 'GET', path: '/NotificationNotes.asmx?WSDL' })).status, 200);
  });

  it('serves an absolute-form target like its path, naming the target’s host', async () => {
    const res = await rawRequest(server.url, {
      method: 'GET',
      path: 'http://sis.example.org/NotificationNotes.asmx?WSDL',
      headers: [['Host', 'other.example']],
    });
    assert.equal(res.status, 200);
    assert.match(res.body.toString(), /location="http:\/\/sis\.example\.org\/NotificationNotes\.asmx"/);
    const token = await rawRequest(server.url, {
      method: 'GET',
      path: 'HTTP://sis.example.org:8080/PushNotificationMobile.asmx/GetTokenDevice?id=1',
    });
    assert.equal(token.status, 200);
    assert.match(token.body.toString(), /<string [^>]*>/);
    const root = await rawRequest(server.url, { method: 'GET', path: 'http://sis.example.org' });
    assert.equal(root.status, 404, 'no path: the root, which names no service file');
    const health = await rawRequest(server.url, { method: 'GET', path: 'http://sis.example.org/healthz' });
    assert.equal(`${health.status} ${health.body.toString()}`, '200 ok\n');
  });

  it('answers CONNECT 405 with the methods it takes, and closes', async () => {
    const res = await rawRequest(server.url, {
      method: 'CONNECT',
      path: 'example.com:443',
      headers: [['Host', 'example.com:443']],
    });
    assert.equal(res.status, 405);
    assert.equal(res.headers.get('allow'), 'GET, HEAD, POST');
    assert.equal(res.headers.get('connection'), 'close');
    assert.match(res.body.toString(), /CONNECT/);
    // The server still answers afterwards.
    assert.equal((await rawRequest(server.url, { method: 'GET', path: '/healthz' })).status, 200);
  });
});
