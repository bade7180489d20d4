/**
 * Ranges an operator stopped (`sis sms block-range`), as every instance sees them: read when the
 * guard starts, and again by the first AuthCode that finds the list more than a second old, which
 * waits for that read (as do the codes arriving meanwhile: one read for all). A block therefore
 * holds on every instance for every code asked more than a second after it, without a restart;
 * a busy service reads the list at most once a second, and an idle one reads nothing. Answering
 * from the old list while a read ran in the background let the first code after a quiet second
 * through (issue 33).
 */
import type { BlockedRange, SmsStore } from '../store/sms-types.js';

export const BLOCKS_REFRESH_MS = 1000;

export class BlockedRangeCache {
  #ranges: readonly BlockedRange[] | null = null;
  #readAt = -Infinity;
  #reading: Promise<void> | null = null;

  constructor(
    private readonly store: SmsStore,
    private readonly onError: (err: unknown) => void,
  ) {}

  /** Reads the blocks now; a failure is only told (the database may not be up yet). */
  async load(): Promise<void> {
    await this.refresh().catch(this.onError);
  }

  /** The block covering `phone` at `at`, or null. */
  async covering(phone: string, at: Date): Promise<BlockedRange | null> {
    if (this.#ranges === null) await this.refresh();
    else if (Date.now() - this.#readAt >= BLOCKS_REFRESH_MS)
      // A failed read keeps the last list: the code's own write, on the same database, fails then too.
      await this.refresh().catch(this.onError);
    const t = at.getTime();
    return this.#ranges!.find((b) => phone.startsWith(b.range) && (b.until === null || b.until.getTime() > t)) ?? null;
  }

  private refresh(): Promise<void> {
    // Taken before the read: a block committed while the read runs is seen by the next one.
    const startedAt = Date.now();
    this.#reading ??= this.store
      .blockedRanges(new Date())
      .then((ranges) => {
        this.#ranges = ranges;
        this.#readAt = startedAt;
      })
      .finally(() => (this.#reading = null));
    return this.#reading;
  }
}
