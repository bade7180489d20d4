import type { DestinationStream, pino } from 'pino';

/** pino's SonicBoom, as `pino.destination` makes it. */
type SonicBoom = ReturnType<typeof pino.destination>;

/**
 * Log lines gathered in memory and handed to a synchronous SonicBoom together, once `bytes`
 * characters wait or `ms` after the first of them. SonicBoom's own buffering (`minLength`)
 * measured dearer a line than this (bench/RESULTS.md): each of its writes takes the byte length of the whole
 * text still buffered (`Buffer.byteLength`, up to 4 KiB a line) and grows it by concatenation.
 * SonicBoom still does the writing: partial writes, EAGAIN on a non-blocking pipe, flushSync.
 */
export class LineBatch implements DestinationStream {
  #lines: string[] = [];
  #chars = 0;
  #timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly sink: SonicBoom,
    private readonly bytes: number,
    private readonly ms: number,
  ) {}

  write(line: string): void {
    this.#lines.push(line);
    this.#chars += line.length;
    if (this.#chars >= this.bytes) this.#pass();
    else if (this.#timer === null) {
      this.#timer = setTimeout(() => {
        this.#timer = null;
        this.#pass();
      }, this.ms);
      this.#timer.unref();
    }
  }

  /** What waits handed on, then written out; `done` once it is (pino's `logger.flush`). */
  flush(done: (err?: Error) => void = () => undefined): void {
    this.#pass();
    this.sink.flush(done);
  }

  /** What waits written out before this returns (at exit). */
  flushSync(): void {
    this.#pass();
    this.sink.flushSync();
  }

  #pass(): void {
    if (this.#lines.length === 0) return;
    const text = this.#lines.length === 1 ? this.#lines[0]! : this.#lines.join('');
    this.#lines = [];
    this.#chars = 0;
    this.sink.write(text);
  }
}
