/**
 * The brake on provider reports (docs/security.md, Provider reports): a report at
 * SIS_SMS_RECEIPT_PATH passes no gate, since its signature or token is its key; so a guess at
 * that key must cost time. Every refused report is counted by gateway and reason
 * (sis_sms_reports_refused_total); a report refused for its signature or token (401) counts
 * against the client's address, and an address with FAILURES of them in a minute has its reports
 * answered 429, unread, for the rest of that minute. The failures are counted by a rate limiter
 * (in Redis when SIS_REDIS_URL is set, so every instance sees them; each instance then reads at
 * most one more before it brakes too).
 */
import type { LimiterUse, RateLimiter } from '../access/rate-limit.js';
import type { RateLimit } from '../config/parse-settings.js';

/** Failed reports an address may send in a window before the rest of it is braked. */
export const FAILURES = 10;
/** The rule of the limiter that counts failures: its FAILURES-th failure in a minute is refused. */
export const FAILURE_RULE: RateLimit = { limit: FAILURES - 1, windowMs: 60_000 };

/** The failures' counts in Redis, and what Redis away means for them. */
export const REPORT_FAILURES: LimiterUse = {
  key: 'reports',
  part: 'report brake',
  effect: 'refused provider reports are not braked per address (each is still checked and refused)',
};

/** Why a report was refused, by the status it was answered. */
const REASONS: Readonly<Record<number, string>> = {
  400: 'malformed',
  401: 'unauthenticated',
  404: 'not-its-message',
  405: 'method',
  409: 'replayed',
  413: 'too-large',
  429: 'braked',
};

export class ReportBrake {
  /** Refused reports by gateway, then reason. */
  readonly refused = new Map<string, Map<string, number>>();
  /** Braked addresses and when their brake ends (ms). */
  readonly #until = new Map<string, number>();

  constructor(
    private readonly failures: RateLimiter,
    private readonly now: () => number = Date.now,
  ) {}

  /** How long an address's reports are still answered 429 unread (ms); 0: they are read. */
  waitOf(address: string): number {
    const until = this.#until.get(address);
    if (until === undefined) return 0;
    const left = until - this.now();
    if (left > 0) return left;
    this.#until.delete(address);
    return 0;
  }

  /** Counts a report's answer; one refused for its signature or token counts against its address. */
  async answered(gateway: string, address: string, status: number): Promise<void> {
    if (status < 400) return;
    const reason = REASONS[status] ?? (status >= 500 ? 'failure' : 'other');
    const counts = this.refused.get(gateway) ?? new Map<string, number>();
    counts.set(reason, (counts.get(reason) ?? 0) + 1);
    this.refused.set(gateway, counts);
    if (status !== 401) return;
    const decision = await this.failures.hit(address);
    if (decision.allowed) return;
    if (this.#until.size >= 10_000) this.sweep();
    this.#until.set(address, this.now() + decision.retryAfterMs);
  }

  /** Forgets ended brakes, so an attack from many addresses does not keep them all. */
  private sweep(): void {
    const now = this.now();
    for (const [address, until] of this.#until) if (until <= now) this.#until.delete(address);
  }

  async close(): Promise<void> {
    await this.failures.close();
  }
}
