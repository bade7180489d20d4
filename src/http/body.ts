import type { IncomingMessage } from 'node:http';
import { RequestTooLargeError } from '../errors/errors.js';

/**
 * Reads a request body up to `limit` bytes. A declared Content-Length over the limit is refused
 * before a byte is read; a body that grows past it is refused as soon as it does, and reading
 * stops there: the rest is never held in memory (decision 10). The caller closes the connection:
 * `refused.bodyRefused` is raised for it.
 */
export function readBody(req: IncomingMessage, limit: number, refused?: { bodyRefused: boolean }): Promise<Buffer> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) {
    if (refused !== undefined) refused.bodyRefused = true;
    return Promise.reject(new RequestTooLargeError(limit));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) {
        req.off('data', onData);
        req.pause();
        if (refused !== undefined) refused.bodyRefused = true;
        reject(new RequestTooLargeError(limit));
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.once('end', () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size)));
    // A client that goes away mid-body: node:http destroys the request with ECONNRESET "aborted".
    // The listener stays after the end (a late error is then ignored, not thrown); a settled promise ignores the rest.
    req.on('error', reject);
  });
}
