/**
 * A fixed number of requests over a few keep-alive connections, each answer read to its end:
 * for counting what a server spends per request (instructions, CPU time), where a timed load
 * generator would make the count depend on the rate.
 */
import { Agent, request } from 'node:http';
import type { BenchRequest } from '../scenarios/scenario.js';

/** Sends `count` requests, `connections` at a time; rejects on the first non-2xx answer. */
export async function sendCount(
  base: string,
  path: string,
  req: BenchRequest,
  count: number,
  connections: number,
): Promise<void> {
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  const body = req.body === undefined ? undefined : Buffer.from(req.body, 'utf8');
  const headers: Record<string, string | number> = { ...req.headers };
  if (body !== undefined) headers['Content-Length'] = body.length;
  const url = new URL(path, base);
  const one = (): Promise<void> =>
    new Promise((done, fail) => {
      const r = request(url, { method: req.method, headers, agent }, (res) => {
        res.resume();
        res.once('end', () =>
          (res.statusCode ?? 0) < 300 ? done() : fail(new Error(`${path}: HTTP ${res.statusCode}`)),
        );
      });
      // A kept-alive connection the server closed as idle (its keep-alive timeout passed while
      // callgrind_control ran) fails the next request sent on it: send that one again.
      r.once('error', (err: NodeJS.ErrnoException) =>
        r.reusedSocket && err.code === 'ECONNRESET' ? one().then(done, fail) : fail(err),
      );
      r.end(body);
    });
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < count) {
      next++;
      await one();
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(connections, count) }, lane));
  } finally {
    agent.destroy();
  }
}
