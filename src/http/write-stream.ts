/**
 * Sends a streamed body (a large list read page by page). HTTP/1.1: chunked, each page written as
 * it is read, the next one read only once the client has taken the last (backpressure), so memory
 * stays bounded. HTTP/1.0 has no chunked encoding: the pieces are gathered and sent under one
 * Content-Length, as every other answer. The status is sent before the list is read to its end,
 * so a failure midway cannot become a fault any more: the connection is cut, and the client sees
 * a truncated answer rather than a well-formed partial list.
 */
import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { StreamedBody } from '../reply/reply.js';

/** How an answer ended: every answer held whole is 'sent'; a streamed one may end otherwise. */
export type ReplyEnd =
  | { readonly kind: 'sent' }
  /** The client closed the connection first. */
  | { readonly kind: 'client-gone' }
  /** The client took nothing for the stall time: the connection was cut. */
  | { readonly kind: 'stalled' }
  /** Reading failed midway: the connection was cut. */
  | { readonly kind: 'failed'; readonly error: unknown };

export interface StreamOptions {
  /** Longest wait for the client to take more before the connection is cut. */
  readonly stallMs: number;
  /** Told once, after the body was closed (its database snapshot released). */
  readonly onEnd: (end: ReplyEnd) => void;
}

export async function sendStreamed(
  res: ServerResponse,
  status: number,
  headers: OutgoingHttpHeaders,
  body: StreamedBody,
  options: StreamOptions,
): Promise<void> {
  let gone = false;
  const onClose = (): void => void (gone = true);
  res.once('close', onClose);
  let end: ReplyEnd = { kind: 'sent' };
  try {
    if (res.req.httpVersionMajor === 1 && res.req.httpVersionMinor === 0)
      end = await gathered(res, status, headers, body, () => gone);
    else end = await chunked(res, status, headers, body, options.stallMs, () => gone);
  } catch (error) {
    end = { kind: 'failed', error };
  } finally {
    res.off('close', onClose);
    if (end.kind !== 'sent') res.destroy();
    await body.close();
    options.onEnd(end);
  }
}

async function chunked(
  res: ServerResponse,
  status: number,
  headers: OutgoingHttpHeaders,
  body: StreamedBody,
  stallMs: number,
  gone: () => boolean,
): Promise<ReplyEnd> {
  // No Content-Length: node:http sends Transfer-Encoding: chunked to an HTTP/1.1 client.
  res.writeHead(status, headers);
  for (;;) {
    const pieces = await body.next();
    if (gone()) return { kind: 'client-gone' };
    if (pieces === null) {
      res.end();
      return { kind: 'sent' };
    }
    // A page's pieces go out in one write of the socket.
    res.cork();
    let room = true;
    let taken: ((error?: Error | null) => void) | undefined;
    const flushed = new Promise<Error | null>((resolve) => (taken = (error) => resolve(error ?? null)));
    for (let i = 0; i < pieces.length; i++) room = res.write(pieces[i]!, i === pieces.length - 1 ? taken : undefined);
    if (pieces.length === 0) taken?.();
    // Listen before uncorking: from Node 22 on, a corked chunked response holds its writes and
    // uncork() sends them, emitting 'drain' inside the call when the socket took them all.
    const waiting = room ? null : drained(res, flushed, stallMs);
    res.uncork();
    if (waiting !== null) {
      const waited = await waiting;
      if (waited !== 'drained') return { kind: waited === 'closed' ? 'client-gone' : 'stalled' };
    }
  }
}

async function gathered(
  res: ServerResponse,
  status: number,
  headers: OutgoingHttpHeaders,
  body: StreamedBody,
  gone: () => boolean,
): Promise<ReplyEnd> {
  const all: Buffer[] = [];
  let length = 0;
  for (let pieces = await body.next(); pieces !== null; pieces = await body.next()) {
    if (gone()) return { kind: 'client-gone' };
    for (const piece of pieces) {
      all.push(piece);
      length += piece.length;
    }
  }
  res.writeHead(status, { ...headers, 'Content-Length': length });
  res.cork();
  for (const piece of all) res.write(piece);
  res.end();
  return { kind: 'sent' };
}

/**
 * Waits until the client has taken what was written, the connection closes, or the stall time
 * passes. Taken is told by 'drain' or by the page's last write callback, whichever comes first:
 * from Node 22 on, a response whose flushed page left the socket below its high-water mark while
 * still holding bytes sets no 'drain' on the socket, and so the response's own 'drain' never
 * comes; the callback of the last write always does, once the socket has handed it to the kernel.
 */
function drained(
  res: ServerResponse,
  flushed: Promise<Error | null>,
  stallMs: number,
): Promise<'drained' | 'closed' | 'stalled'> {
  return new Promise((resolve) => {
    let settled = false;
    const done = (how: 'drained' | 'closed' | 'stalled'): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      res.off('drain', onDrain);
      res.off('close', onClose);
      resolve(how);
    };
    const onDrain = (): void => done('drained');
    const onClose = (): void => done('closed');
    const timer = setTimeout(() => done('stalled'), stallMs);
    res.on('drain', onDrain);
    res.on('close', onClose);
    void flushed.then((error) => done(error === null ? 'drained' : 'closed'));
  });
}
