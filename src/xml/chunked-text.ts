/**
 * Text for a large answer, encoded to UTF-8 in pieces as it is written. One big string costs
 * twice: V8 flattens the concatenation, then Buffer.from copies it. Pieces of a few KiB are
 * encoded as they fill, and sent one after the other under a single Content-Length.
 */
export class ChunkedText {
  private readonly chunks: Buffer[] = [];
  private pending = '';

  add(text: string): void {
    this.pending += text;
    if (this.pending.length >= 16 * 1024) this.flush();
  }

  finish(): Buffer[] {
    this.flush();
    return this.chunks;
  }

  private flush(): void {
    if (this.pending === '') return;
    this.chunks.push(Buffer.from(this.pending, 'utf8'));
    this.pending = '';
  }
}

/** A body: one string (small answers: fastest as is) or UTF-8 pieces (large lists). */
export type Body = string | readonly Buffer[];

/** Joins a head, a body and a tail without flattening a large body into one string. */
export function wrapBody(head: string, body: Body, tail: string): Body {
  if (typeof body === 'string') return head + body + tail;
  return [Buffer.from(head, 'utf8'), ...body, Buffer.from(tail, 'utf8')];
}
