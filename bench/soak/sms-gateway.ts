/**
 * The soak's SMS gateway stand-in: answers every POST 200 and counts the messages per phone, so
 * the soak can say which accepted codes were delivered once, more than once or never (the
 * service's webhook gateway sends JSON with the phone and the code).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface CountingGateway {
  readonly url: string;
  /** Messages received per phone (E.164). */
  readonly perPhone: Map<string, number>;
  readonly total: () => number;
  close(): Promise<void>;
}

export async function startCountingGateway(): Promise<CountingGateway> {
  const perPhone = new Map<string, number>();
  let total = 0;
  const server = createServer((req, res) => {
    if (req.method !== 'POST') return void res.writeHead(405, { Allow: 'POST' }).end();
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        const { phone } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { phone: string };
        perPhone.set(phone, (perPhone.get(phone) ?? 0) + 1);
        total++;
        res.writeHead(200, { 'Content-Type': 'text/plain' }).end('queued');
      } catch {
        res.writeHead(400).end('not JSON');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/sms`,
    perPhone,
    total: () => total,
    close() {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
