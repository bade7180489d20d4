/**
 * Text for a large answer, encoded to UTF-8 as it is written. One big string costs twice: V8
 * flattens the concatenation, then Buffer.from copies it. Here items gather in a short string
 * that is encoded straight into 64 KiB slabs every couple of KiB, so no large string is ever built.
 */
const SLAB_BYTES = 64 * 1024;
/** Characters gathered before encoding: one write per item would cost more than it saves. */
const PENDING_CHARS = 2048;

export class ChunkedText {
  private readonly done: Buffer[] = [];
  private slab = Buffer.allocUnsafe(SLAB_BYTES);
  /** Where the bytes not yet handed out start, and where the next ones go. */
  private start = 0;
  private at = 0;
  private pending = '';

  add(text: string): void {
    this.pending += text;
    if (this.pending.length >= PENDING_CHARS) this.encode();
  }

  /** The pieces written so far, handed out (a stream sends them while the rest is written). */
  take(): Buffer[] {
    this.encode();
    if (this.at > this.start) {
      this.done.push(this.slab.subarray(this.start, this.at));
      this.start = this.at;
    }
    return this.done.splice(0);
  }

  finish(): Buffer[] {
    return this.take();
  }

  private encode(): void {
    const text = this.pending;
    if (text === '') return;
    this.pending = '';
    // A UTF-16 unit never takes more than 3 bytes in UTF-8 (a surrogate pair: 4 for 2).
    const most = text.length * 3;
    if (this.at + most > this.slab.length) {
      if (this.at > this.start) this.done.push(this.slab.subarray(this.start, this.at));
      this.slab = Buffer.allocUnsafe(Math.max(SLAB_BYTES, most));
      this.start = 0;
      this.at = 0;
    }
    this.at += this.slab.write(text, this.at, 'utf8');
  }
}
