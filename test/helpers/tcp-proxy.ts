/**
 * A TCP proxy in front of PostgreSQL for fault tests: stop it (the database is unreachable), start
 * it again on the same port (the database is back), cut every connection, hold traffic so a
 * query is in flight when the connection dies, or keep the database's answers back a while (the
 * query has run, its client still waits), or partition the network: `pause` stops forwarding both
 * ways while every connection stays open and new ones are accepted without an answer (neither
 * forwarded nor closed, as when packets are dropped), `resume` forwards again. Or an address that
 * moves (a DNS name, a Kubernetes Service, a balancer after a switchover): `moveTo` sends new
 * connections to another target and leaves the open ones where they are.
 */
import { createServer, connect } from 'node:net';
import type { Server, Socket } from 'node:net';

export class TcpProxy {
  #server: Server | null = null;
  #port = 0;
  /** Swallowing what clients send: true; or from the first chunk that matches (a RegExp); false. */
  #held: boolean | RegExp = false;
  /** The connections whose answers are kept back, and what was kept. */
  #holding: Set<Socket> | null = null;
  #replies: { client: Socket; data: Buffer }[] = [];
  #onReply: (() => void) | null = null;
  #onSwallowed: (() => void) | null = null;
  readonly #sockets = new Set<Socket>();
  #paused = false;
  /** Connections accepted during a partition: linked to the target when it ends. */
  #waiting: Socket[] = [];

  constructor(
    private targetHost: string,
    private targetPort: number,
  ) {}

  /** New connections go to `host:port` from now; those open stay with the old target. */
  moveTo(host: string, port: number): void {
    this.targetHost = host;
    this.targetPort = port;
  }

  get port(): number {
    return this.#port;
  }

  /** Listens (again) on the same port; the first call picks a free one. */
  async start(): Promise<number> {
    const server = createServer((client) => this.#accept(client));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.#port, '127.0.0.1', () => resolve());
    });
    this.#server = server;
    this.#port = (server.address() as { port: number }).port;
    return this.#port;
  }

  /** Stops listening and cuts every connection: the database is gone. */
  async stop(): Promise<void> {
    const server = this.#server;
    this.#server = null;
    this.cut();
    if (server !== null) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Stops listening and cuts every connection, for good. */
  async close(): Promise<void> {
    this.#paused = false;
    await this.stop();
  }

  /**
   * A partition: nothing is read from either side, so nothing is forwarded and nothing closed (a
   * peer's close is read only on `resume`, as a FIN sits behind dropped packets); new connections
   * are accepted and left unanswered. Keepalive probes do not tell it: the kernel on this side
   * answers them.
   */
  pause(): void {
    this.#paused = true;
    for (const socket of this.#sockets) socket.pause();
  }

  /** The partition ends: what was kept in the sockets' buffers is delivered, as TCP retransmits. */
  resume(): void {
    this.#paused = false;
    for (const socket of this.#sockets) socket.resume();
    const waiting = this.#waiting;
    this.#waiting = [];
    for (const client of waiting) if (!client.destroyed) this.#link(client);
  }

  /** Cuts every open connection (both sides), as a crashed server or a failed network would. */
  cut(): void {
    for (const socket of [...this.#sockets, ...this.#waiting]) socket.destroy();
    this.#sockets.clear();
    this.#waiting = [];
    this.#held = false;
    this.#holding = null;
    this.#replies = [];
  }

  /**
   * From now until `cut`, what clients send is swallowed: their queries wait for an answer. With
   * `from`, what they send is forwarded until a chunk matches it (`/insert into/`: a write), and
   * swallowed from that chunk on. Resolves once something was swallowed (a query is waiting,
   * however slowly it came).
   */
  hold(from?: RegExp): Promise<void> {
    this.#held = from ?? true;
    return new Promise((resolve) => (this.#onSwallowed = resolve));
  }

  /**
   * From now until `releaseReplies`, what the database sends back on the connections open now is
   * kept here (later connections are left alone). Resolves once something was kept: a query has
   * run (its snapshot taken) and its client is still waiting.
   */
  holdReplies(): Promise<void> {
    this.#holding = new Set(this.#sockets);
    return new Promise((resolve) => (this.#onReply = resolve));
  }

  /** Sends what was kept, in order, and lets answers through again. */
  releaseReplies(): void {
    const replies = this.#replies;
    this.#holding = null;
    this.#replies = [];
    for (const { client, data } of replies) client.write(data);
  }

  #accept(client: Socket): void {
    if (!this.#paused) {
      this.#link(client);
      return;
    }
    client.pause();
    this.#waiting.push(client);
  }

  #link(client: Socket): void {
    const upstream = connect(this.targetPort, this.targetHost);
    this.#sockets.add(client).add(upstream);
    client.on('data', (data) => {
      if (this.#held instanceof RegExp && this.#held.test(data.toString('latin1'))) this.#held = true;
      if (this.#held !== true) upstream.write(data);
      else {
        this.#onSwallowed?.();
        this.#onSwallowed = null;
      }
    });
    upstream.on('data', (data) => {
      if (this.#holding?.has(client) !== true) {
        client.write(data);
        return;
      }
      this.#replies.push({ client, data });
      this.#onReply?.();
      this.#onReply = null;
    });
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
