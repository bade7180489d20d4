/**
 * A real SMS gateway for the outbox tests: an HTTP server that records every POST it receives,
 * checks its signature as a gateway would (HMAC-SHA256 of the raw body, constant-time), and
 * answers the status a test chooses per request, after what the test does meanwhile (`beforeAnswer`:
 * the gateway has the message, its sender is still waiting for the answer).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedSms {
  readonly phone: string;
  readonly code: string;
  readonly message: string;
  readonly messageId: string | undefined;
  readonly contentType: string | undefined;
  /** The W3C trace context the delivery carried, if any. */
  readonly traceparent: string | undefined;
  /** The X-Signature-256 header matched the body under the gateway's secret. */
  readonly signed: boolean;
  /** The status the gateway answered. */
  readonly status: number;
}

export interface SmsGateway {
  readonly url: string;
  /** Every request, in arrival order. */
  readonly received: ReceivedSms[];
  /** Resolves once `n` requests answered 2xx have arrived. */
  delivered(n: number, timeoutMs?: number): Promise<ReceivedSms[]>;
  close(): Promise<void>;
}

export function verifySignature(secret: string, body: Buffer, header: string | undefined): boolean {
  const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(body).digest('hex')}`);
  const given = Buffer.from(header ?? '');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** `status(n)` is the answer to the n-th request (from 0); 200 by default; `beforeAnswer(n)` is awaited first. */
export async function startSmsGateway(
  secret: string,
  status: (n: number) => number = () => 200,
  port = 0,
  beforeAnswer?: (n: number) => Promise<void>,
): Promise<SmsGateway> {
  const received: ReceivedSms[] = [];
  const waiters: (() => void)[] = [];
  const server = createServer((req, res) => {
    // Not a message (`sis check` asks with HEAD): answered as a gateway would, not recorded.
    if (req.method !== 'POST') return void res.writeHead(405, { Allow: 'POST' }).end();
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const parsed = JSON.parse(body.toString('utf8')) as { phone: string; code: string; message: string };
      const answer = status(received.length);
      received.push({
        phone: parsed.phone,
        code: parsed.code,
        message: parsed.message,
        messageId: req.headers['x-message-id'] as string | undefined,
        contentType: req.headers['content-type'],
        traceparent: req.headers['traceparent'] as string | undefined,
        signed: verifySignature(secret, body, req.headers['x-signature-256'] as string | undefined),
        status: answer,
      });
      const reply = (): void => {
        res.writeHead(answer, { 'Content-Type': 'text/plain' }).end(answer < 300 ? 'queued' : 'gateway trouble');
        for (const wake of waiters.splice(0)) wake();
      };
      if (beforeAnswer === undefined) reply();
      else void beforeAnswer(received.length - 1).then(reply, (error: unknown) => res.destroy(error as Error));
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const address = server.address() as AddressInfo;
  const ok = (): ReceivedSms[] => received.filter((r) => r.status < 300);
  return {
    url: `http://127.0.0.1:${address.port}/sms`,
    received,
    async delivered(n, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      while (ok().length < n) {
        const left = deadline - Date.now();
        if (left <= 0)
          throw new Error(
            `the gateway saw ${ok().length} delivered messages of ${n} within ${timeoutMs} ms (${received.length} requests)`,
          );
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, Math.min(left, 200));
          waiters.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
      return ok();
    },
    close() {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** A port nothing listens on (it was free a moment ago): a gateway that is down. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Polls `check` until it returns a value other than undefined. */
export async function eventually<T>(
  check: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 15_000,
  what = 'the condition',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
