/**
 * Ranges an operator stopped (`sis sms block-range`), as every instance sees them: read when the
 * guard starts, then again in the background when an AuthCode finds the list more than a second
 * old, so a block takes effect everywhere within about a second without a restart, AuthCode
 * never waits for the read (only the very first, when the start could not read it), and an idle
 * service reads nothing.
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
    else if (Date.now() - this.#readAt >= BLOCKS_REFRESH_MS) this.refresh().catch(this.onError);
    const t = at.getTime();
    return this.#ranges!.find((b) => phone.startsWith(b.range) && (b.until === null || b.until.getTime() > t)) ?? null;
  }

  private refresh(): Promise<void> {
    this.#reading ??= this.store
      .blockedRanges(new Date())
      .then((ranges) => {
        this.#ranges = ranges;
        this.#readAt = Date.now();
      })
      .finally(() => (this.#reading = null));
    return this.#reading;
  }
}
