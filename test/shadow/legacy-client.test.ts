/**
 * The legacy client against real HTTP servers: the client's request passed on (Host kept,
 * X-Forwarded-For added, hop-by-hop headers dropped), an answer over the size cap refused, and a
 * legacy that refused a connection left alone for a pause, then tried again: while it refuses,
 * requests fail at once instead of each costing a connection attempt.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, Server } from 'node:http';
import { describe, it } from 'node:test';
import { LegacyClient } from '../../src/shadow/legacy-client.js';
import type { ForwardRequest } from '../../src/shadow/legacy-client.js';
import { closedPort } from '../helpers/sms-gateway.js';

const REQUEST: ForwardRequest = {
  method: 'POST',
  relativeUrl: '/Svc.asmx/Op',
  rawHeaders: ['Host', 'client.example', 'Connection', 'keep-alive', 'X-Forwarded-For', '10.0.0.1', 'X-Extra', 'a'],
  body: Buffer.from('id=1'),
  clientAddress: '10.0.0.2',
  write: false,
  copy: false,
};

async function serve(port: number, answer: string, seen: { url?: string; headers?: IncomingHttpHeaders }[]) {
  const server = createServer((req, res) => {
    seen.push({ url: req.url ?? '', headers: req.headers });
    req.resume().on('end', () => res.writeHead(200, { 'Content-Type': 'text/plain' }).end(answer));
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return server;
}

const close = (server: Server): Promise<void> =>
  new Promise((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });

describe('the legacy client', () => {
  it('passes the request on below the legacy base path, and refuses an answer over the cap', async () => {
    const port = await closedPort();
    const seen: { url?: string; headers?: IncomingHttpHeaders }[] = [];
    const server = await serve(port, 'x'.repeat(100), seen);
    const client = new LegacyClient(`http://127.0.0.1:${port}/Legacy/`, {
      timeoutMs: 2000,
      maxAnswerBytes: 50,
      maxSockets: 2,
    });
    try {
      const result = await client.send(REQUEST);
      assert.equal(result.ok, false);
      assert.equal(!result.ok && result.failure, 'too-large');
      assert.equal(seen[0]!.url, '/Legacy/Svc.asmx/Op');
      assert.equal(seen[0]!.headers!.host, 'client.example');
      assert.equal(seen[0]!.headers!['x-forwarded-for'], '10.0.0.1, 10.0.0.2');
      assert.equal(seen[0]!.headers!['x-extra'], 'a');
      assert.equal(seen[0]!.headers!['content-length'], '4');
    } finally {
      client.close();
      await close(server);
    }
  });

  it('leaves a refusing legacy alone for a pause, then answers again once it is back', async () => {
    const port = await closedPort();
    const client = new LegacyClient(`http://127.0.0.1:${port}/`, {
      timeoutMs: 2000,
      maxAnswerBytes: 1000,
      maxSockets: 2,
    });
    const seen: { url?: string }[] = [];
    let server: Server | null = null;
    try {
      const first = await client.send(REQUEST);
      assert.deepEqual(!first.ok && [first.failure, first.reached], ['refused', false]);
      server = await serve(port, 'back', seen);
      const paused = await client.send(REQUEST);
      assert.deepEqual(!paused.ok && [paused.failure, paused.reached], ['refused', false]);
      assert.equal(seen.length, 0, 'no connection made during the pause');
      await new Promise((resolve) => setTimeout(resolve, 1100));
      const again = await client.send(REQUEST);
      assert.equal(again.ok && again.answer.body.toString(), 'back');
    } finally {
      client.close();
      if (server !== null) await close(server);
    }
  });
});
