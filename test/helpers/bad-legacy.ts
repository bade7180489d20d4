/**
 * Legacy services that fail: one that takes connections and never answers, one that answers more
 * than any cap (50 MB, streamed), one that answers bytes that are not HTTP. (One that refuses
 * connections is a closed port: closedPort in sms-gateway.ts.)
 */
import { createServer } from 'node:http';
import { createServer as createTcpServer } from 'node:net';
import type { Server as TcpServer, Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export interface BadLegacy {
  readonly url: string;
  /** Requests (or connections) it received. */
  readonly hits: number;
  /** Of the requests, legacy mode's own probes (`X-Shadow-Probe: 1`). */
  readonly probes: number;
  close(): Promise<void>;
}

export type Badness = 'hang' | 'huge' | 'garbage';

const MB = 1024 * 1024;

export async function startBadLegacy(badness: Badness): Promise<BadLegacy> {
  let hits = 0;
  let probes = 0;
  const sockets = new Set<Socket>();
  let server: TcpServer;
  if (badness === 'garbage') {
    server = createTcpServer((socket) => {
      hits++;
      socket.on('error', () => undefined);
      socket.end('this is not HTTP at all\r\n\r\n');
    });
  } else {
    server = createServer((req, res) => {
      hits++;
      if (req.headers['x-shadow-probe'] === '1') probes++;
      req.resume();
      if (badness === 'hang') return; // never answers
      // 50 MB in 1 MB pieces, without a length: only a running count can stop it.
      res.writeHead(200, { 'Content-Type': 'text/xml; charset=utf-8' });
      let sent = 0;
      const piece = Buffer.alloc(MB, 0x20);
      const more = (): void => {
        while (sent < 50 && res.write(piece)) sent++;
        if (sent >= 50) res.end();
        else res.once('drain', more);
      };
      res.on('error', () => undefined);
      more();
    });
  }
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/Legacy/`,
    get hits() {
      return hits;
    },
    get probes() {
      return probes;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
