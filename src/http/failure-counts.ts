/**
 * The report brake's counts (src/http/report-brake.ts): failed reports per key in a fixed window
 * that opens at a key's first failure. One step both counts and decides, so that no report is
 * answered from a count another report is still changing: in memory a synchronous call, in Redis
 * one script (redis-failure-counts.ts). Apart from the rate limiter's, whose step counts every
 * request: here a genuine report only reads the counts, and counts nothing.
 */

/** One count a report is weighed against: its key, and the failures the window allows it. */
export interface FailureKey {
  readonly key: string;
  readonly allowed: number;
}

export interface FailureCounts {
  /**
   * One report weighed against `keys`: when any of them already holds its `allowed` failures in
   * the window, the report is braked and the answer is how long that window still runs (ms, > 0);
   * otherwise 0, and a `failed` report is counted against each key (atomically with the
   * decision). A count that cannot be taken (Redis away) answers 0: never braked.
   */
  weigh(keys: readonly FailureKey[], failed: boolean): number | Promise<number>;
  close(): Promise<void>;
}

export class MemoryFailureCounts implements FailureCounts {
  readonly #windows = new Map<string, { count: number; resetAt: number }>();
  readonly #sweeper: NodeJS.Timeout;

  constructor(
    private readonly windowMs: number,
    private readonly now: () => number = Date.now,
  ) {
    // Closed windows are forgotten now and then, so the map holds only recent clients.
    this.#sweeper = setInterval(() => this.#sweep(), Math.max(windowMs, 1000)).unref();
  }

  weigh(keys: readonly FailureKey[], failed: boolean): number {
    const now = this.now();
    let wait = 0;
    for (const { key, allowed } of keys) {
      const w = this.#windows.get(key);
      if (w !== undefined && w.resetAt > now && w.count >= allowed) wait = Math.max(wait, w.resetAt - now);
    }
    if (wait > 0 || !failed) return wait;
    for (const { key } of keys) {
      const w = this.#windows.get(key);
      if (w === undefined || w.resetAt <= now) this.#windows.set(key, { count: 1, resetAt: now + this.windowMs });
      else w.count++;
    }
    return 0;
  }

  #sweep(): void {
    const now = this.now();
    for (const [key, w] of this.#windows) if (w.resetAt <= now) this.#windows.delete(key);
  }

  async close(): Promise<void> {
    clearInterval(this.#sweeper);
  }
}
