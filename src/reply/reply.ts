/**
 * What the HTTP layer writes for a request, whoever decided it: a binding, the metadata endpoint,
 * a refusal or a failure of ours. The XML writers below the bindings make its bodies.
 */
export interface Reply {
  readonly status: number;
  /** Null sends no Content-Type at all (ASMX's void GET/POST answers). */
  readonly contentType: string | null;
  /**
   * One string, or UTF-8 pieces for a large answer (both sent under one Content-Length), or a
   * stream for a list longer than a page (sent chunked as it is read; decision 17).
   */
  readonly body: Body;
  /** Raised once the operation was invoked: ASMX then sends `Cache-Control: private, max-age=0`. */
  readonly invoked: boolean;
  readonly headers?: ReadonlyArray<readonly [string, string]>;
}

/** A body: one string (small answers: fastest as is), UTF-8 pieces (large lists) or a stream (longer ones). */
export type Body = string | readonly Buffer[] | StreamedBody;

/**
 * A body written while it is sent: pieces made on demand, from a list read page by page, so a
 * large answer never sits in memory whole. Whoever takes one must call close() in the end.
 */
export interface StreamedBody {
  /** The next pieces (a page's worth), or null once the body is complete. Rejects if the reading fails. */
  next(): Promise<readonly Buffer[] | null>;
  /** Releases what the pieces are made from (a database snapshot). Idempotent; never rejects. */
  close(): Promise<void>;
}

/** ASMX's Cache-Control: `private, max-age=0` once the operation was invoked, `private` otherwise. */
export function cacheControlOf(reply: Reply): string {
  return reply.invoked ? 'private, max-age=0' : 'private';
}

export function isStreamed(body: Body): body is StreamedBody {
  return typeof body !== 'string' && !Array.isArray(body);
}

/** Joins a head, a body and a tail without flattening a large body into one string. */
export function wrapBody(head: string, body: Body, tail: string): Body {
  if (typeof body === 'string') return head + body + tail;
  const before = Buffer.from(head, 'utf8');
  const after = Buffer.from(tail, 'utf8');
  if (!isStreamed(body)) return [before, ...body, after];
  let started = false;
  let ended = false;
  return {
    async next() {
      if (ended) return null;
      const pieces = await body.next();
      const out = pieces === null ? [] : [...pieces];
      if (!started) {
        started = true;
        out.unshift(before);
      }
      if (pieces === null) {
        ended = true;
        out.push(after);
      }
      return out.filter((piece) => piece.length > 0);
    },
    close: () => body.close(),
  };
}
