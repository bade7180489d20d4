import type { ServerResponse } from 'node:http';
import type { Reply } from '../reply/reply.js';
import { cacheControlOf, isStreamed } from '../reply/reply.js';
import { sendStreamed } from './write-stream.js';
import type { ReplyEnd } from './write-stream.js';

export type { ReplyEnd } from './write-stream.js';

/** What the HTTP layer adds to every answer besides the reply's own headers. */
export interface ReplyExtras {
  readonly requestId: string;
  /** X-Sis-Worker-Pid, when debug headers are on. */
  readonly workerPid: string | null;
  /** The connection carries no further request: a refused body was not read, or the server drains. */
  readonly closeAfter: boolean;
  /**
   * Told once the answer has been handed to node:http in full, and how it ended: before
   * writeReply returns for an answer held whole (always 'sent'); after its last page for a
   * streamed one (a list longer than a page), which may also end cut short. The place for the
   * request's log line and metrics. Without it, a streamed answer failing midway is reported as
   * a process warning.
   */
  readonly onEnd?: (end: ReplyEnd) => void;
  /** Longest wait for a client to take more of a streamed answer before it is cut (default 30 s). */
  readonly stallTimeoutMs?: number;
}

const DEFAULT_STALL_MS = 30_000;

/**
 * Writes a Reply with ASMX's transport rules: Content-Length (never chunked) and Cache-Control
 * `private` or `private, max-age=0`. A string body is handed to node:http as a string: node then
 * sends head and body in one write, where a Buffer body costs a writev. The one exception is a
 * streamed body (docs/decisions.md, decision 17: long lists are streamed): chunked to HTTP/1.1 clients,
 * written as it is read, after this function has returned.
 */
export function writeReply(res: ServerResponse, reply: Reply, extras: ReplyExtras): void {
  const { body } = reply;
  const cacheControl = cacheControlOf(reply);
  const streamed = isStreamed(body);
  // The usual answer's headers as one literal, in wire order: one object shape for every request
  // rather than a shape per header added.
  const headers: Record<string, string | number> =
    reply.contentType !== null && !streamed
      ? {
          'Cache-Control': cacheControl,
          'Content-Type': reply.contentType,
          'Content-Length': contentLength(body),
          'X-Request-Id': extras.requestId,
        }
      : otherHeaders(reply, cacheControl, extras.requestId);
  if (extras.workerPid !== null) headers['X-Sis-Worker-Pid'] = extras.workerPid;
  if (reply.headers !== undefined) for (const [name, value] of reply.headers) headers[name] = value;
  if (extras.closeAfter) {
    headers['Connection'] = 'close';
    res.on('finish', () => res.socket?.destroySoon());
  }
  if (streamed) {
    const onEnd = extras.onEnd ?? warnOnFailure;
    // Nobody awaits the stream: should the hook itself throw, that must not end the process.
    sendStreamed(res, reply.status, headers, body, { stallMs: extras.stallTimeoutMs ?? DEFAULT_STALL_MS, onEnd }).catch(
      (error: unknown) => warnOnFailure({ kind: 'failed', error }),
    );
    return;
  }
  res.writeHead(reply.status, headers);
  if (typeof body === 'string') res.end(body, 'utf8');
  else {
    // Pieces of a large answer go out together: cork, write each, uncork on end.
    res.cork();
    for (const piece of body) res.write(piece);
    res.end();
  }
  extras.onEnd?.(SENT);
}

const SENT: ReplyEnd = { kind: 'sent' };

/** Headers of an answer without a content type, or streamed (no Content-Length), in the same order. */
function otherHeaders(reply: Reply, cacheControl: string, requestId: string): Record<string, string | number> {
  const { body } = reply;
  const headers: Record<string, string | number> = { 'Cache-Control': cacheControl };
  if (reply.contentType !== null) headers['Content-Type'] = reply.contentType;
  if (!isStreamed(body)) headers['Content-Length'] = contentLength(body);
  headers['X-Request-Id'] = requestId;
  return headers;
}

/** With no hook (or a hook that threw), a failure midway is at least not silent. */
function warnOnFailure(end: ReplyEnd): void {
  if (end.kind !== 'failed') return;
  const message = end.error instanceof Error ? end.error.message : String(end.error);
  process.emitWarning(`a streamed answer failed midway and its connection was cut: ${message}`, 'StreamedReplyWarning');
}

/** The bytes of an answer held whole: a string's UTF-8, or its pieces'. */
function contentLength(body: string | readonly Buffer[]): number {
  if (typeof body === 'string') return Buffer.byteLength(body, 'utf8');
  let n = 0;
  for (const piece of body) n += piece.length;
  return n;
}
