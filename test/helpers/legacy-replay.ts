/**
 * A legacy service for the shadow tests: a real HTTP server that answers every golden exchange
 * (test/golden/) with the captured answer, byte for byte, found by the request's method, path,
 * Content-Type, SOAPAction and body. Mounted under a base path of its own (`/SchoolService/`),
 * as an operator's legacy service would be. Its WSDL, disco and help pages come from `pages`, a
 * second instance of ours mounted at that path (they name that address, not the client's path).
 * `alter` changes chosen answers on purpose: the differences the shadow must report, exactly;
 * `delays` holds chosen answers back (one slow operation). Legacy mode's own probes
 * (`X-Shadow-Probe: 1`) are received as `probe` and answered 404, as a page it lacks.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createServer, request } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fixture } from './test-server.js';

export const LEGACY_BASE = '/SchoolService/';

export interface GoldenCase {
  readonly name: string;
  readonly method: string;
  readonly path: string;
  /** As curl sends them: empty values removed, a body without a type sent as a form. */
  readonly headers: [string, string][];
  readonly body: Buffer | undefined;
  readonly answer: GoldenAnswer;
}

export interface GoldenAnswer {
  readonly status: number;
  readonly contentType: string | null;
  readonly cacheControl: string | null;
  readonly body: Buffer;
}

/** Every golden exchange, in folder order. */
export function goldenCases(): GoldenCase[] {
  const root = fixture('golden');
  return readdirSync(root)
    .filter((n) => existsSync(join(root, n, 'request.json')))
    .map((name) => {
      const dir = join(root, name);
      const req = JSON.parse(readFileSync(join(dir, 'request.json'), 'utf8')) as {
        method: string;
        path: string;
        headers: [string, string][];
        body?: string;
      };
      const res = JSON.parse(readFileSync(join(dir, 'response.json'), 'utf8')) as {
        status: number;
        contentType: string | null;
        cacheControl: string | null;
      };
      const body = req.body === undefined ? undefined : readFileSync(join(dir, req.body));
      const headers = req.headers.filter(([, v]) => v !== '');
      if (body !== undefined && !req.headers.some(([n]) => n.toLowerCase() === 'content-type'))
        headers.push(['Content-Type', 'application/x-www-form-urlencoded']);
      const answerFile = join(dir, 'response.body');
      return {
        name,
        method: req.method,
        path: req.path,
        headers,
        body,
        answer: {
          status: res.status,
          contentType: res.contentType,
          cacheControl: res.cacheControl,
          body: existsSync(answerFile) ? readFileSync(answerFile) : Buffer.alloc(0),
        },
      };
    });
}

export interface LegacyReplay {
  /** SIS_LEGACY_URL for it. */
  readonly url: string;
  /** Requests received, by golden case name (`?` for none found), in arrival order. */
  readonly received: string[];
  /** For each request received, whether it said it is a copy (`X-Shadow-Copy: 1`). */
  readonly copies: boolean[];
  close(): Promise<void>;
}

export interface ReplayOptions {
  /** Changes to answers, by golden case name. */
  readonly alter?: ReadonlyMap<string, (answer: GoldenAnswer) => GoldenAnswer>;
  /** Where WSDL, disco and help pages come from: a service of ours mounted at LEGACY_BASE. */
  readonly pages?: string;
  /** Milliseconds to wait before answering, by golden case name. */
  readonly delays?: ReadonlyMap<string, number>;
}

export async function startLegacyReplay(options: ReplayOptions = {}): Promise<LegacyReplay> {
  const byKey = new Map<string, GoldenCase>();
  for (const c of goldenCases()) byKey.set(keyOf(c.method, c.path, c.headers, c.body), c);
  const received: string[] = [];
  const copies: boolean[] = [];
  const server = createServer((req, res) => {
    copies.push(req.headers['x-shadow-copy'] === '1');
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = (req.url ?? '/').startsWith(LEGACY_BASE) ? `/${req.url!.slice(LEGACY_BASE.length)}` : req.url!;
      const body = chunks.length === 0 ? undefined : Buffer.concat(chunks);
      const headers = Object.entries(req.headers).map(([n, v]) => [n, String(v)] as [string, string]);
      if (req.headers['x-shadow-probe'] === '1' && options.pages === undefined) {
        received.push('probe');
        return void res.writeHead(404, { 'Content-Type': 'text/plain' }).end('no capture');
      }
      const found = byKey.get(keyOf(req.method ?? 'GET', path, headers, body));
      if (found === undefined && options.pages !== undefined && isPage(req.method, path)) {
        received.push('page');
        return void proxyPage(options.pages, req, res);
      }
      received.push(found?.name ?? '?');
      if (found === undefined) return void res.writeHead(404, { 'Content-Type': 'text/plain' }).end('no capture');
      const answer = options.alter?.get(found.name)?.(found.answer) ?? found.answer;
      const head: Record<string, string | number> = {
        'Content-Length': answer.body.length,
        Server: 'Microsoft-IIS/10.0',
      };
      // The captures note HTML error pages as text/html (compared by type only); ASMX sends a charset.
      if (answer.contentType !== null)
        head['Content-Type'] = answer.contentType === 'text/html' ? 'text/html; charset=utf-8' : answer.contentType;
      if (answer.cacheControl !== null) head['Cache-Control'] = answer.cacheControl;
      const delay = options.delays?.get(found.name) ?? 0;
      if (delay === 0) return void res.writeHead(answer.status, head).end(answer.body);
      const timer = setTimeout(() => res.writeHead(answer.status, head).end(answer.body), delay);
      res.on('close', () => clearTimeout(timer));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${LEGACY_BASE}`,
    received,
    copies,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function keyOf(
  method: string,
  path: string,
  headers: readonly (readonly [string, string])[],
  body: Buffer | undefined,
): string {
  const header = (name: string): string =>
    headers
      .filter(([n]) => n.toLowerCase() === name)
      .map(([, v]) => v)
      .join(', ');
  const digest = createHash('sha256')
    .update(body ?? Buffer.alloc(0))
    .digest('hex');
  return JSON.stringify([method, path, header('content-type'), header('soapaction'), digest]);
}

function isPage(method: string | undefined, path: string): boolean {
  return method === 'GET' && /^\/[^/?]+\.asmx(\?.*)?$/i.test(path);
}

/** The page as our second instance renders it for the same Host (so it names the legacy's path). */
function proxyPage(pages: string, req: IncomingMessage, res: ServerResponse): void {
  const target = new URL(pages);
  const up = request(
    {
      host: target.hostname,
      port: target.port,
      method: 'GET',
      path: req.url,
      headers: { host: req.headers.host ?? '' },
    },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, {
        ...(answer.headers['content-type'] === undefined ? {} : { 'Content-Type': answer.headers['content-type'] }),
        ...(answer.headers['cache-control'] === undefined ? {} : { 'Cache-Control': answer.headers['cache-control'] }),
      });
      answer.pipe(res);
    },
  );
  up.on('error', () => res.writeHead(502).end());
  up.end();
}
