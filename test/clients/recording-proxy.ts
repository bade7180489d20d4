/**
 * A recording HTTP proxy in front of the test server. Clients are pointed at it, and the service
 * writes the proxy's address into the WSDL (addresses follow the Host header), so every call a
 * generated client makes passes through here: the test can then prove which binding each call
 * really used (a "SOAP 1.2 port" that quietly speaks 1.1 would otherwise pass unnoticed).
 */
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Binding = 'soap11' | 'soap12' | 'httpget' | 'httppost' | 'metadata' | 'other';

export interface Exchange {
  readonly method: string;
  readonly path: string;
  readonly binding: Binding;
  /** The operation the request names (SOAPAction, SOAP 1.2 action, body element or path). */
  readonly operation: string | null;
  readonly status: number;
  readonly requestBody: string;
  readonly responseBody: string;
}

export interface RecordingProxy {
  readonly url: string;
  readonly exchanges: Exchange[];
  close(): Promise<void>;
}

export async function startRecordingProxy(target: string): Promise<RecordingProxy> {
  const upstream = new URL(target);
  const exchanges: Exchange[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const forward = request(
        {
          host: upstream.hostname,
          port: upstream.port,
          method: req.method,
          path: req.url,
          // Host stays the proxy's, so the WSDL sends clients back through the proxy.
          headers: req.headers,
        },
        (up) => {
          const answer: Buffer[] = [];
          up.on('data', (c: Buffer) => answer.push(c));
          up.on('end', () => {
            const responseBody = Buffer.concat(answer);
            exchanges.push({
              method: req.method ?? '',
              path: req.url ?? '',
              ...classify(req.method ?? '', req.url ?? '', req.headers, body.toString('utf8')),
              status: up.statusCode ?? 0,
              requestBody: body.toString('utf8'),
              responseBody: responseBody.toString('utf8'),
            });
            res.writeHead(up.statusCode ?? 502, up.rawHeaders);
            res.end(responseBody);
          });
        },
      );
      forward.on('error', (error) => {
        res.writeHead(502, { 'Content-Type': 'text/plain' });
        res.end(`proxy: ${error.message}`);
      });
      forward.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    exchanges,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function classify(
  method: string,
  url: string,
  headers: Record<string, string | string[] | undefined>,
  body: string,
): { binding: Binding; operation: string | null } {
  const path = url.split('?')[0] ?? '';
  const query = url.includes('?') ? url.slice(url.indexOf('?') + 1).toLowerCase() : '';
  const opInPath = /\.asmx\/([^/?]+)$/i.exec(path)?.[1] ?? null;
  const contentType = String(headers['content-type'] ?? '');
  const mediaType = contentType.toLowerCase();
  if (method === 'GET' && opInPath === null && (query === 'wsdl' || query === 'disco'))
    return { binding: 'metadata', operation: null };
  if (method === 'GET' && opInPath !== null) return { binding: 'httpget', operation: opInPath };
  if (method === 'POST' && opInPath !== null) return { binding: 'httppost', operation: opInPath };
  if (method !== 'POST') return { binding: 'other', operation: null };
  const bodyOp = /<(?:[\w.-]+:)?Body\b[^>]*>\s*<(?:[\w.-]+:)?([\w.-]+)/.exec(body)?.[1] ?? null;
  if (mediaType.startsWith('application/soap+xml')) {
    const action = /action\s*=\s*"?([^";]*)/i.exec(contentType)?.[1];
    return { binding: 'soap12', operation: lastSegment(action) ?? bodyOp };
  }
  if (mediaType.startsWith('text/xml')) {
    const action = String(headers['soapaction'] ?? '').replace(/"/g, '');
    return { binding: 'soap11', operation: lastSegment(action) ?? bodyOp };
  }
  return { binding: 'other', operation: null };
}

function lastSegment(action: string | undefined): string | null {
  if (action === undefined || action === '') return null;
  return action.slice(action.lastIndexOf('/') + 1);
}

/** `binding operation` for every call, sorted and without repeats: what a client actually exercised. */
export function callsSeen(exchanges: readonly Exchange[]): string[] {
  const seen = new Set(
    exchanges.filter((e) => e.binding !== 'metadata').map((e) => `${e.binding} ${e.operation ?? '?'}`),
  );
  return [...seen].sort();
}

/** The same list, built from what a client was meant to call. */
export function callsExpected(calls: Readonly<Record<string, readonly string[]>>): string[] {
  return Object.entries(calls)
    .flatMap(([binding, ops]) => ops.map((op) => `${binding} ${op}`))
    .sort();
}

/** Non-200 exchanges, described for an assertion message. */
export function failedExchanges(exchanges: readonly Exchange[]): string {
  return exchanges
    .filter((e) => e.status !== 200)
    .map(
      (e) =>
        `${e.method} ${e.path} (${e.binding}) -> ${e.status}\n  request: ${e.requestBody.slice(0, 600)}\n  response: ${e.responseBody.slice(0, 600)}`,
    )
    .join('\n');
}
