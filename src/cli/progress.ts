/**
 * A one-line progress display for long commands (rows, rate, elapsed time; the share of the file
 * read when its size is known), drawn only when standard error is a terminal (logs and pipes stay
 * clean), redrawn at most ten times a second. Hand-written rather than a library's (cli-progress):
 * it is one line of text, and the libraries bring their own terminal handling (cursor hiding,
 * other escape sequences) for what `\r` and "erase line" do here.
 */
import type { TextSink } from './output.js';

const REDRAW_MS = 100;
const BAR_WIDTH = 24;

export class Progress {
  readonly #sink: TextSink;
  readonly #label: string;
  readonly #totalBytes: number | null;
  readonly #started = Date.now();
  readonly #enabled: boolean;
  #bytes = 0;
  #rows = 0;
  #phase: string | null = null;
  #drawnAt = 0;
  #drawn = false;

  /** `totalBytes` is null when the size is unknown (standard input, an export): rows are counted then. */
  constructor(sink: TextSink, label: string, totalBytes: number | null) {
    this.#sink = sink;
    this.#label = label;
    this.#totalBytes = totalBytes !== null && totalBytes > 0 ? totalBytes : null;
    this.#enabled = sink.isTTY === true;
  }

  read(bytes: number): void {
    this.#bytes += bytes;
    this.#maybeDraw();
  }

  /** `n` more rows were read. */
  rows(n: number): void {
    this.#rows += n;
    this.#maybeDraw();
  }

  /** What happens after the file is read ("checking keys", "writing"). */
  phase(text: string): void {
    this.#phase = text;
    this.#draw();
  }

  /** Clears the line, so the command's own message starts clean. */
  done(): void {
    if (this.#enabled && this.#drawn) this.#sink.write('\r\x1b[K');
    this.#drawn = false;
  }

  #maybeDraw(): void {
    const now = Date.now();
    if (now - this.#drawnAt >= REDRAW_MS) this.#draw(now);
  }

  #draw(now = Date.now()): void {
    if (!this.#enabled) return;
    this.#drawnAt = now;
    this.#drawn = true;
    const seconds = ((now - this.#started) / 1000).toFixed(1);
    const rows = `${this.#rows.toLocaleString('en-US')} rows`;
    let middle = '';
    if (this.#phase !== null) {
      middle = `  ${this.#phase}...`;
    } else if (this.#totalBytes !== null) {
      const share = Math.min(1, this.#bytes / this.#totalBytes);
      const filled = Math.round(share * BAR_WIDTH);
      middle = `  [${'#'.repeat(filled)}${'-'.repeat(BAR_WIDTH - filled)}] ${String(Math.floor(share * 100)).padStart(3)}%`;
    } else if (this.#bytes > 0) {
      middle = `  ${(this.#bytes / 1048576).toFixed(1)} MiB`;
    }
    // A rate once there is one worth showing (the first tenths of a second say little).
    const elapsed = (now - this.#started) / 1000;
    const rate =
      elapsed >= 1 && this.#rows > 0 ? `  ${Math.round(this.#rows / elapsed).toLocaleString('en-US')} rows/s` : '';
    const line = `${this.#label}${middle}  ${rows}  ${seconds} s${rate}`;
    const width = this.#sink.columns ?? 80;
    this.#sink.write(`\r\x1b[K${line.length >= width ? line.slice(0, width - 1) : line}`);
  }
}
