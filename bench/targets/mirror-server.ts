/**
 * The necessary work of compare mode (issue 20), as the reference for bench/shadow-cost.ts: the
 * ceiling server's fixed answers and, with MIRROR_URL, each request sent on to that legacy once
 * answered (undici's Pool, as ours), its answer read whole and compared byte for byte with ours.
 * No sampling, cap, time-out, worker, records or metrics: what compare mode cannot do without.
 * Its cost against the same server without MIRROR_URL is the least any compare mode costs here.
 *
 * Usage: PORT=N [MIRROR_URL=http://host:port] node dist/bench/targets/mirror-server.js ANSWERS.json
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { IncomingHttpHeaders } from 'node:http';
import { Pool } from 'undici';
import type { Dispatcher } from 'undici';
import type { FixedAnswer } from './ceiling-server.js';

const file = process.argv[2];
if (file === undefined) throw new Error('usage: mirror-server ANSWERS.json');
const table = JSON.parse(readFileSync(file, 'utf8')) as Record<string, FixedAnswer>;
const answers = new Map<string, { status: number; contentType: string; body: Buffer }>();
for (const [path, a] of Object.entries(table))
  answers.set(path, { status: a.status, contentType: a.contentType, body: Buffer.from(a.body, 'utf8') });

const mirror = process.env['MIRROR_URL'];
const pool = mirror === undefined ? null : new Pool(mirror, { connections: 64, pipelining: 1 });
const tally = { identical: 0, different: 0, failed: 0 };

function compare(method: string, path: string, headers: IncomingHttpHeaders, body: Buffer, ours: Buffer): void {
  pool!
    .request({ method: method as Dispatcher.HttpMethod, path, headers, body })
    .then(async (res) => {
      const theirs = Buffer.from(await res.body.arrayBuffer());
      tally[theirs.equals(ours) ? 'identical' : 'different']++;
    })
    .catch(() => tally.failed++);
}

const server = createServer((req, res) => {
  const path = req.url ?? '';
  const answer = answers.get(path);
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.once('end', () => {
    if (answer === undefined) {
      res.writeHead(path === '/tally' ? 200 : 404, { 'Content-Type': 'application/json' }).end(JSON.stringify(tally));
      return;
    }
    res.writeHead(answer.status, {
      'Cache-Control': 'private, max-age=0',
      'Content-Type': answer.contentType,
      'Content-Length': answer.body.length,
    });
    res.end(answer.body);
    if (pool !== null) {
      // The pool names its own host and keeps its own connections.
      const headers = { ...req.headers };
      delete headers.host;
      delete headers.connection;
      compare(req.method ?? 'GET', path, headers, Buffer.concat(chunks), answer.body);
    }
  });
});
server.listen(Number(process.env['PORT'] ?? 0), '127.0.0.1');
process.once('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
  void pool?.destroy();
});
