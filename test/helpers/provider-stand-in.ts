/**
 * A stand-in for an SMS provider's HTTP API in the gateway tests: a real HTTP server that records
 * every request (method, path, headers, form or JSON body) and answers as the test's `answer`
 * says, following the provider's documented answers. The tests cannot reach the providers.
 */
import { createServer } from 'node:http';
import type { IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface StandInRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  /** The form's or the query's parameters. */
  readonly params: URLSearchParams;
}

export interface StandInAnswer {
  readonly status: number;
  /** The answer's JSON; or, given as `text`, a plain text (Kannel's sendsms answers). */
  readonly json?: unknown;
  readonly text?: string;
  /** Answer only after this long (a provider that does not answer in time). */
  readonly delayMs?: number;
}

export interface StandIn {
  readonly url: string;
  readonly requests: StandInRequest[];
  /** The requests to one path (a send, not the start's probe). */
  to(path: string): StandInRequest[];
  close(): Promise<void>;
}

/** `answer(request, n)`: n is how many requests to the same path came before. */
export async function startStandIn(answer: (request: StandInRequest, n: number) => StandInAnswer): Promise<StandIn> {
  const requests: StandInRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://stand-in');
      const params = new URLSearchParams(url.search);
      for (const [k, v] of new URLSearchParams(Buffer.concat(chunks).toString('utf8'))) params.set(k, v);
      const request = { method: req.method ?? '', path: url.pathname, headers: req.headers, params };
      // n: the earlier requests to the same path (the start's probes ask other paths).
      const a = answer(request, requests.filter((r) => r.path === request.path).length);
      requests.push(request);
      const send = (): void => {
        if (res.writableEnded) return;
        if (a.text !== undefined) res.writeHead(a.status, { 'Content-Type': 'text/plain' }).end(a.text);
        else res.writeHead(a.status, { 'Content-Type': 'application/json' }).end(JSON.stringify(a.json));
      };
      if (a.delayMs === undefined) send();
      else setTimeout(send, a.delayMs).unref();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    to: (path) => requests.filter((r) => r.path === path),
    close() {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
