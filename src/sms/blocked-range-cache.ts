/**
 * Ranges an operator stopped (`sis sms block-range`), as every instance sees them: read from the
 * database at most once a second, when an AuthCode asks, so a block takes effect everywhere
 * within about a second without a restart, and an idle service reads nothing.
 */
import type { BlockedRange, SmsStore } from '../store/sms-types.js';

export const BLOCKS_REFRESH_MS = 1000;

export class BlockedRangeCache {
  #ranges: readonly BlockedRange[] = [];
  #readAt = -Infinity;
  #reading: Promise<void> | null = null;

  constructor(private readonly store: SmsStore) {}

  /** The block covering `phone` at `at`, or null. */
  async covering(phone: string, at: Date): Promise<BlockedRange | null> {
    if (Date.now() - this.#readAt >= BLOCKS_REFRESH_MS) await this.refresh(at);
    const t = at.getTime();
    return this.#ranges.find((b) => phone.startsWith(b.range) && (b.until === null || b.until.getTime() > t)) ?? null;
  }

  private refresh(at: Date): Promise<void> {
    this.#reading ??= this.store
      .blockedRanges(at)
      .then((ranges) => {
        this.#ranges = ranges;
        this.#readAt = Date.now();
      })
      .finally(() => (this.#reading = null));
    return this.#reading;
  }
}
