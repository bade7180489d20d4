import { request } from 'node:http';
import { pathFor } from '../scenarios/scenario.js';
import type { BenchRequest, Scenario, TargetName } from '../scenarios/scenario.js';
import { checkPeerBody } from './peer-check.js';

export interface Answer {
  readonly status: number;
  readonly contentType: string | undefined;
  readonly body: Buffer;
  /** Milliseconds from sending to the last byte. */
  readonly ms: number;
}

/** One request on a fresh connection, the whole answer kept. */
export function send(base: string, path: string, req: BenchRequest, timeoutMs = 120_000): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const body = req.body === undefined ? undefined : Buffer.from(req.body, 'utf8');
    const headers: Record<string, string | number> = { ...req.headers };
    if (body !== undefined) headers['Content-Length'] = body.length;
    const r = request(new URL(path, base), { method: req.method, headers, agent: false, timeout: timeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          contentType: res.headers['content-type'],
          body: Buffer.concat(chunks),
          ms: Number(process.hrtime.bigint() - started) / 1e6,
        }),
      );
      res.on('error', reject);
    });
    r.on('timeout', () => r.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    r.on('error', reject);
    r.end(body);
  });
}

/**
 * Null when the answer is right: ours and the ceiling byte for byte (status, content type,
 * body); node-soap by its values, since its bytes are its own.
 */
export function verify(s: Scenario, target: TargetName, a: Answer): string | null {
  if (a.status !== s.expected.status)
    return `status ${a.status}, expected ${s.expected.status}: ${a.body.toString('utf8').slice(0, 300)}`;
  const text = a.body.toString('utf8');
  if (target === 'node-soap') return s.peer === undefined ? null : checkPeerBody(text, s.peer);
  if (a.contentType !== s.expected.contentType)
    return `Content-Type ${a.contentType}, expected ${s.expected.contentType}`;
  if (!a.body.equals(Buffer.from(s.expected.body, 'utf8'))) {
    let i = 0;
    while (i < text.length && text[i] === s.expected.body[i]) i++;
    return `body differs at character ${i}: got ${JSON.stringify(text.slice(Math.max(0, i - 40), i + 60))}, expected ${JSON.stringify(s.expected.body.slice(Math.max(0, i - 40), i + 60))}`;
  }
  return null;
}

/** Sends a scenario's request once and throws when the answer is wrong. */
export async function checkOnce(s: Scenario, target: TargetName, base: string): Promise<Answer> {
  const a = await send(base, pathFor(s, target), s.request);
  const problem = verify(s, target, a);
  if (problem !== null) throw new Error(`${s.id} at ${target}: wrong answer: ${problem}`);
  return a;
}
