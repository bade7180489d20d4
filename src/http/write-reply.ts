import type { ServerResponse } from 'node:http';
import type { Reply } from '../bindings/types.js';

/** What the HTTP layer adds to every answer besides the reply's own headers. */
export interface ReplyExtras {
  readonly requestId: string;
  /** X-Sis-Worker-Pid, when debug headers are on. */
  readonly workerPid: string | null;
  /** The connection carries no further request: a refused body was not read, or the server drains. */
  readonly closeAfter: boolean;
}

/**
 * Writes a Reply with ASMX's transport rules: Content-Length always (never chunked) and
 * Cache-Control `private` or `private, max-age=0`. A string body is handed to node:http as a
 * string: node then sends head and body in one write, where a Buffer body costs a writev.
 */
export function writeReply(res: ServerResponse, reply: Reply, extras: ReplyExtras): void {
  const { body } = reply;
  const headers: Record<string, string | number> = {
    'Cache-Control': reply.invoked ? 'private, max-age=0' : 'private',
  };
  if (reply.contentType !== null) headers['Content-Type'] = reply.contentType;
  headers['Content-Length'] = typeof body === 'string' ? Buffer.byteLength(body, 'utf8') : byteLength(body);
  headers['X-Request-Id'] = extras.requestId;
  if (extras.workerPid !== null) headers['X-Sis-Worker-Pid'] = extras.workerPid;
  if (reply.headers !== undefined) for (const [name, value] of reply.headers) headers[name] = value;
  if (extras.closeAfter) headers['Connection'] = 'close';
  res.writeHead(reply.status, headers);
  if (typeof body === 'string') res.end(body, 'utf8');
  else {
    // Pieces of a large answer go out together: cork, write each, uncork on end.
    res.cork();
    for (const piece of body) res.write(piece);
    res.end();
  }
  if (extras.closeAfter) res.on('finish', () => res.socket?.destroySoon());
}

function byteLength(pieces: readonly Buffer[]): number {
  let n = 0;
  for (const piece of pieces) n += piece.length;
  return n;
}
