import type { IncomingMessage } from 'node:http';
import { RequestTooLargeError } from '../errors/errors.js';

/** Told once: the whole body, or why there is none. */
export type BodyDone = (err: Error | null, body: Buffer | null) => void;

/**
 * Reads a request body up to `limit` bytes. A declared Content-Length over the limit is refused
 * before a byte is read; a body that grows past it is refused as soon as it does, and reading
 * stops there: the rest is never held in memory (decision 10). The caller closes the connection:
 * `refused.bodyRefused` is raised for it. Callbacks rather than a promise: a request whose body
 * is read before dispatch is then answered in the same turn as its last byte.
 */
export function collectBody(
  req: IncomingMessage,
  limit: number,
  refused: { bodyRefused: boolean } | undefined,
  done: BodyDone,
): void {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) {
    if (refused !== undefined) refused.bodyRefused = true;
    done(new RequestTooLargeError(limit), null);
    return;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  let settled = false;
  const settle = (err: Error | null, body: Buffer | null): void => {
    if (settled) return;
    settled = true;
    done(err, body);
  };
  const onData = (chunk: Buffer): void => {
    size += chunk.length;
    if (size > limit) {
      req.off('data', onData);
      req.pause();
      if (refused !== undefined) refused.bodyRefused = true;
      settle(new RequestTooLargeError(limit), null);
      return;
    }
    chunks.push(chunk);
  };
  req.on('data', onData);
  req.once('end', () => settle(null, chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size)));
  // A client that goes away mid-body: node:http destroys the request with ECONNRESET "aborted".
  // The listener stays after the end (a late error is then ignored, not thrown).
  req.on('error', (err) => settle(err, null));
}

/** collectBody as a promise. */
export function readBody(req: IncomingMessage, limit: number, refused?: { bodyRefused: boolean }): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    collectBody(req, limit, refused, (err, body) => (err === null ? resolve(body!) : reject(err))),
  );
}
