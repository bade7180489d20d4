/**
 * Our answer as bytes, for a comparison: what writeReply would send (status, Content-Type,
 * Cache-Control, body), read within a size cap. A streamed list is either read here (ours computed
 * in the background) or copied as it is sent to the client (`teeReply`), never read twice.
 */
import { cacheControlOf, isStreamed } from '../reply/reply.js';
import type { Reply, StreamedBody } from '../reply/reply.js';

export interface Captured {
  readonly status: number;
  readonly contentType: string | null;
  readonly cacheControl: string | null;
  readonly body: Buffer;
}

/** The headers writeReply sends, as the reply makes them. */
function head(reply: Reply): Omit<Captured, 'body'> {
  let contentType = reply.contentType;
  let cacheControl: string | null = cacheControlOf(reply);
  for (const [name, value] of reply.headers ?? []) {
    const lower = name.toLowerCase();
    if (lower === 'content-type') contentType = value;
    else if (lower === 'cache-control') cacheControl = value;
  }
  return { status: reply.status, contentType, cacheControl };
}

/** Too large to compare: the comparison is skipped (our answer to the client is not affected). */
export class TooLargeToCompare extends Error {
  constructor(max: number) {
    super(`our answer is over ${max} bytes`);
    this.name = 'TooLargeToCompare';
  }
}

/** Reads the whole reply (closing a streamed body); rejects with TooLargeToCompare past `max`. */
export async function captureReply(reply: Reply, max: number): Promise<Captured> {
  const body = reply.body;
  if (typeof body === 'string') {
    const bytes = Buffer.from(body, 'utf8');
    if (bytes.length > max) throw new TooLargeToCompare(max);
    return { ...head(reply), body: bytes };
  }
  if (!isStreamed(body)) return { ...head(reply), body: joined(body, max) };
  const pieces: Buffer[] = [];
  let size = 0;
  try {
    for (let next = await body.next(); next !== null; next = await body.next()) {
      for (const piece of next) {
        size += piece.length;
        if (size > max) throw new TooLargeToCompare(max);
        pieces.push(piece);
      }
    }
  } finally {
    await body.close();
  }
  return { ...head(reply), body: Buffer.concat(pieces, size) };
}

/**
 * The same reply for the client, and our answer's bytes once it has been sent. A streamed body
 * is copied as the client takes it (up to `max`: beyond, or cut short, the capture is null).
 */
export function teeReply(reply: Reply, max: number): { reply: Reply; captured: Promise<Captured | null> } {
  const body = reply.body;
  if (!isStreamed(body)) {
    const captured = captureReply(reply, max).catch(() => null);
    return { reply, captured };
  }
  let resolve: (c: Captured | null) => void = () => undefined;
  const captured = new Promise<Captured | null>((r) => (resolve = r));
  const pieces: Buffer[] = [];
  let size = 0;
  let whole = true;
  const copy: StreamedBody = {
    async next() {
      let next: readonly Buffer[] | null;
      try {
        next = await body.next();
      } catch (error) {
        resolve(null);
        throw error;
      }
      if (next === null) {
        resolve(whole ? { ...head(reply), body: Buffer.concat(pieces, size) } : null);
        return null;
      }
      for (const piece of next) {
        size += piece.length;
        if (size > max) whole = false;
        else pieces.push(piece);
      }
      if (!whole) pieces.length = 0;
      return next;
    },
    close() {
      // Closed before the end (client gone, stall): nothing whole to compare.
      resolve(null);
      return body.close();
    },
  };
  return { reply: { ...reply, body: copy }, captured };
}

function joined(pieces: readonly Buffer[], max: number): Buffer {
  let size = 0;
  for (const piece of pieces) size += piece.length;
  if (size > max) throw new TooLargeToCompare(max);
  return Buffer.concat(pieces, size);
}
