/**
 * The soak's TCP proxy between the instances and PostgreSQL: the database's one address as the
 * instances know it. `pause` is a partition (connections kept, nothing forwarded either way, new
 * connections accepted and left unanswered, as when packets are dropped); `resume` ends it;
 * `moveTo` is a switchover's address move (a virtual IP or DNS name pointed at the new primary:
 * the connections open to the old one are cut, new ones reach the new one). The tests' own proxy
 * (test/helpers/tcp-proxy.ts) holds single queries too; the bench keeps its own, smaller one.
 */
import { connect, createServer } from 'node:net';
import type { Server, Socket } from 'node:net';

export class SoakProxy {
  #server: Server | null = null;
  #port = 0;
  #paused = false;
  readonly #sockets = new Set<Socket>();
  #waiting: Socket[] = [];

  constructor(private targetPort: number) {}

  get port(): number {
    return this.#port;
  }

  get target(): number {
    return this.targetPort;
  }

  async start(): Promise<number> {
    const server = createServer((client) => this.#accept(client));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    this.#server = server;
    this.#port = (server.address() as { port: number }).port;
    return this.#port;
  }

  pause(): void {
    this.#paused = true;
    for (const socket of this.#sockets) socket.pause();
  }

  resume(): void {
    this.#paused = false;
    for (const socket of this.#sockets) socket.resume();
    const waiting = this.#waiting;
    this.#waiting = [];
    for (const client of waiting) if (!client.destroyed) this.#link(client);
  }

  /** The address now leads to `port`: every open connection is cut, as the old host's are. */
  moveTo(port: number): void {
    this.targetPort = port;
    for (const socket of [...this.#sockets, ...this.#waiting]) socket.destroy();
    this.#sockets.clear();
    this.#waiting = [];
  }

  async close(): Promise<void> {
    this.#paused = false;
    for (const socket of [...this.#sockets, ...this.#waiting]) socket.destroy();
    this.#sockets.clear();
    this.#waiting = [];
    const server = this.#server;
    this.#server = null;
    if (server !== null) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  #accept(client: Socket): void {
    client.on('error', () => client.destroy());
    if (!this.#paused) return this.#link(client);
    client.pause();
    this.#waiting.push(client);
  }

  #link(client: Socket): void {
    const upstream = connect(this.targetPort, '127.0.0.1');
    this.#sockets.add(client).add(upstream);
    // Plain writes, not pipe(): pipe() would resume a socket `pause` stopped once its peer drains.
    client.on('data', (data: Buffer) => upstream.write(data));
    upstream.on('data', (data: Buffer) => client.write(data));
    const close = (): void => {
      client.destroy();
      upstream.destroy();
      this.#sockets.delete(client);
      this.#sockets.delete(upstream);
    };
    client.on('error', close).on('close', close);
    upstream.on('error', close).on('close', close);
    client.resume();
  }
}
