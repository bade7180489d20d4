/**
 * At most `size` holders at once; the others wait in turn. Bounds what snapshot reads may take
 * from the database (connections, pool share) however many large answers are asked for at once.
 */
export class Slots {
  readonly #size: number;
  readonly #waiting: Array<() => void> = [];
  #taken = 0;

  constructor(size: number) {
    this.#size = Math.max(1, size);
  }

  get taken(): number {
    return this.#taken;
  }

  get waiting(): number {
    return this.#waiting.length;
  }

  /** Resolves with the function that gives the slot back (calling it twice gives back once). */
  async take(): Promise<() => void> {
    if (this.#taken < this.#size) this.#taken++;
    else await new Promise<void>((resolve) => this.#waiting.push(resolve));
    let given = false;
    return () => {
      if (given) return;
      given = true;
      const next = this.#waiting.shift();
      // The slot passes straight to the next in line: the count stays as it is.
      if (next !== undefined) next();
      else this.#taken--;
    };
  }
}
