import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect, createServer } from 'node:net';
import type { Socket } from 'node:net';
import { after, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { TcpProxy } from '../helpers/tcp-proxy.js';

/** The partition the fault tests rely on: connections kept and unanswered, then served again. */
describe('the test TCP proxy partitions the network', () => {
  const echo = createServer((socket) => socket.pipe(socket));
  after(() => echo.close());

  async function connected(port: number): Promise<Socket> {
    const socket = connect(port, '127.0.0.1');
    await once(socket, 'connect');
    return socket;
  }

  async function answer(socket: Socket, text: string): Promise<string> {
    socket.write(text);
    const [data] = (await once(socket, 'data')) as [Buffer];
    return data.toString();
  }

  it('keeps old and new connections open and silent, then delivers', { timeout: 10_000 }, async () => {
    await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
    const proxy = new TcpProxy('127.0.0.1', (echo.address() as { port: number }).port);
    const port = await proxy.start();
    try {
      const old = await connected(port);
      assert.equal(await answer(old, 'a'), 'a');
      proxy.pause();
      const fresh = await connected(port); // accepted, not refused
      const heard: string[] = [];
      let closed = false;
      for (const socket of [old, fresh]) {
        socket.on('data', (data: Buffer) => heard.push(data.toString()));
        socket.on('close', () => (closed = true));
        socket.write('b');
      }
      await sleep(300);
      assert.deepEqual(heard, [], 'nothing is answered during the partition');
      assert.equal(closed, false, 'nothing is closed during the partition');
      proxy.resume();
      await sleep(300);
      assert.deepEqual(heard, ['b', 'b'], 'what was sent is delivered when it ends');
      old.destroy();
      fresh.destroy();
    } finally {
      await proxy.close();
    }
  });
});
