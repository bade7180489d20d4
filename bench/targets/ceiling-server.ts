/**
 * The ceiling: bare node:http answering fixed, correct bytes, one answer per scenario path.
 * It reads each request body to its end (a real server must) and does nothing else, so what it
 * reaches is what node:http on this core allows: no service can go faster.
 *
 * Usage: PORT=N node dist/bench/targets/ceiling-server.js ANSWERS.json
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { OutgoingHttpHeaders } from 'node:http';

export interface FixedAnswer {
  readonly status: number;
  readonly contentType: string;
  readonly body: string;
}

const file = process.argv[2];
if (file === undefined) throw new Error('usage: ceiling-server ANSWERS.json');
const table = JSON.parse(readFileSync(file, 'utf8')) as Record<string, FixedAnswer>;

const answers = new Map<string, { status: number; headers: OutgoingHttpHeaders; body: Buffer }>();
for (const [path, a] of Object.entries(table)) {
  const body = Buffer.from(a.body, 'utf8');
  answers.set(path, {
    status: a.status,
    // The headers ASMX sends with an answer: nothing more, so the ceiling pays for no extra bytes.
    headers: { 'Cache-Control': 'private, max-age=0', 'Content-Type': a.contentType, 'Content-Length': body.length },
    body,
  });
}

const server = createServer((req, res) => {
  const answer = answers.get(req.url ?? '');
  req.resume();
  req.once('end', () => {
    if (answer === undefined) {
      res.writeHead(404, { 'Content-Length': 0 }).end();
      return;
    }
    res.writeHead(answer.status, answer.headers);
    res.end(answer.body);
  });
});
server.listen(Number(process.env['PORT'] ?? 0), '127.0.0.1');
process.once('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
});
