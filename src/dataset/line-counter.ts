/** Where a reader is in a text it sees one chunk at a time: line, and column in code points. */

/**
 * Line and column (in code points, as editors count) of absolute offsets, moving forward only,
 * while the text before the buffer is dropped.
 */
export class LineCounter {
  private line = 1;
  /** Newlines are counted up to here (absolute). */
  private counted = 0;
  /** Where the current line starts (absolute). */
  private lineStart = 0;
  /** Code points of the current line that were in text already dropped. */
  private carried = 0;

  lineAt(buf: string, bufStart: number, offset: number): number {
    this.countTo(buf, bufStart, offset);
    return this.line;
  }

  locate(buf: string, bufStart: number, offset: number): { line: number; column: number } {
    this.countTo(buf, bufStart, offset);
    const from = this.lineStart >= bufStart ? this.lineStart - bufStart : 0;
    const before = this.lineStart >= bufStart ? 0 : this.carried;
    return { line: this.line, column: before + codePoints(buf, from, offset - bufStart) + 1 };
  }

  /** Called before buf[0, length) is dropped. */
  drop(buf: string, bufStart: number, length: number): void {
    this.countTo(buf, bufStart, bufStart + length);
    const cut = bufStart + length;
    if (this.lineStart < cut) {
      const from = this.lineStart >= bufStart ? this.lineStart - bufStart : 0;
      this.carried = (this.lineStart >= bufStart ? 0 : this.carried) + codePoints(buf, from, length);
    }
  }

  private countTo(buf: string, bufStart: number, offset: number): void {
    if (offset <= this.counted) return;
    const end = offset - bufStart;
    for (let i = buf.indexOf('\n', this.counted - bufStart); i !== -1 && i < end; i = buf.indexOf('\n', i + 1)) {
      this.line++;
      this.lineStart = bufStart + i + 1;
      this.carried = 0;
    }
    this.counted = offset;
  }
}

function codePoints(text: string, from: number, to: number): number {
  let n = 0;
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    // The second half of a surrogate pair is not a character of its own.
    if (c < 0xdc00 || c > 0xdfff || i === from) n++;
  }
  return n;
}
