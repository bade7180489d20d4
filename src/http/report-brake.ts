/**
 * The brake on provider reports (docs/security.md, Provider reports): a report at
 * SIS_SMS_RECEIPT_PATH passes no gate, since its signature or token is its key; so a guess at
 * that key must cost time. Every refused report is counted by gateway and reason
 * (sis_sms_reports_refused_total). A report whose signature or token is wrong (401) is a failure,
 * counted against its client and gateway (and the client's IPv6 /48, with a larger allowance);
 * a client with FAILURES of them in a minute has that gateway's reports answered 429 for the rest
 * of the minute. A genuine report (right signature or token: stale, replayed or not) is never
 * counted. The count and the decision are one atomic step, taken once a report is checked and
 * before it is answered (in Redis when SIS_REDIS_URL is set, one script, so every instance sees
 * them): however many reports arrive at once, no more than FAILURES failures a minute are
 * answered 401, and a report of a braked client is answered 429 and never recorded, right key or
 * not. Why not charge on arrival and give back: a genuine report in flight would hold a failure's
 * place, and a provider's burst of more than FAILURES reports would brake itself.
 */
import type { LimiterUse } from '../access/rate-limit.js';
import type { Dependency } from '../observe/dependency-health.js';
import { MemoryFailureCounts } from './failure-counts.js';
import type { FailureCounts, FailureKey } from './failure-counts.js';

/** Failed reports a client may send to one gateway's path in a window before the rest of it is braked. */
export const FAILURES = 10;
/** The same for all the clients of one IPv6 /48 together (a tunnel broker hands anyone 65,536 /64s). */
export const SITE_FAILURES = 50;
/** The window the failures are counted in. */
export const FAILURE_WINDOW_MS = 60_000;

/** The failures' counts in Redis, and what Redis away means for them. */
export const REPORT_FAILURES: LimiterUse = {
  key: 'reports',
  part: 'report brake',
  effect: 'refused provider reports are not braked per client (each is still checked and refused)',
};

/** Why a report was refused, by the status it was answered. */
const REASONS: Readonly<Record<number, string>> = {
  400: 'malformed',
  401: 'unauthenticated',
  404: 'not-its-message',
  405: 'method',
  409: 'replayed',
  410: 'stale',
  413: 'too-large',
  429: 'braked',
};

/** The keys one report of a client is weighed against, and what the brake remembers of them here. */
export interface BrakeKeys {
  readonly keys: readonly FailureKey[];
  /** The client's own key, remembered here while braked (its reports then answered 429 unread). */
  readonly client: string;
}

export class ReportBrake {
  /** Refused reports by gateway, then reason. */
  readonly refused = new Map<string, Map<string, number>>();
  /** Braked clients (gateway and client) and when their brake ends (ms), as the counts last said. */
  readonly #until = new Map<string, number>();

  constructor(
    private readonly counts: FailureCounts,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * What a report of `gateway` from `client` (clientKey) counts against: the client, and its IPv6
   * /48 when one is counted beside it (`site`, the exchange's: null for IPv4, or when the client is the /48).
   */
  keysOf(gateway: string, client: string, site: string | null): BrakeKeys {
    // Keyed by gateway too: a client failing one gateway's reports does not brake another's.
    const own = `${gateway}|${client}`;
    return {
      client: own,
      keys: [
        { key: own, allowed: FAILURES },
        ...(site === null ? [] : [{ key: `${gateway}|${site}`, allowed: SITE_FAILURES }]),
      ],
    };
  }

  /** How long a client's reports are still answered 429 unread, as far as this instance knows (ms); 0: read them. */
  waitOf(keys: BrakeKeys): number {
    const until = this.#until.get(keys.client);
    if (until === undefined) return 0;
    const left = until - this.now();
    if (left > 0) return left;
    this.#until.delete(keys.client);
    return 0;
  }

  /**
   * A checked report weighed (`failed`: its signature or token was wrong): how long it is braked
   * (ms: answer 429, record nothing), or 0 (answer it; a failure is then counted).
   */
  async weigh(keys: BrakeKeys, failed: boolean): Promise<number> {
    const wait = await this.counts.weigh(keys.keys, failed);
    if (wait > 0) {
      if (this.#until.size >= 10_000) this.sweep();
      this.#until.set(keys.client, this.now() + wait);
    }
    return wait;
  }

  /** Counts a report's answer when it was refused. */
  answered(gateway: string, status: number): void {
    if (status < 400) return;
    const reason = REASONS[status] ?? (status >= 500 ? 'failure' : 'other');
    const counts = this.refused.get(gateway) ?? new Map<string, number>();
    counts.set(reason, (counts.get(reason) ?? 0) + 1);
    this.refused.set(gateway, counts);
  }

  /** Forgets ended brakes, so an attack from many addresses does not keep them all. */
  private sweep(): void {
    const now = this.now();
    for (const [key, until] of this.#until) if (until <= now) this.#until.delete(key);
  }

  async close(): Promise<void> {
    await this.counts.close();
  }
}

/** The brake, its counts in Redis when `redisUrl` is set (`redisState` told of its failures), else in memory. */
export async function createReportBrake(
  redisUrl: string | null,
  redisTimeoutMs: number,
  redisState: Dependency,
): Promise<ReportBrake> {
  if (redisUrl === null) return new ReportBrake(new MemoryFailureCounts(FAILURE_WINDOW_MS));
  // ioredis is loaded only when a Redis is configured.
  const { RedisFailureCounts } = await import('./redis-failure-counts.js');
  const counts = new RedisFailureCounts(redisUrl, redisTimeoutMs, FAILURE_WINDOW_MS, redisState, REPORT_FAILURES);
  await counts.start();
  return new ReportBrake(counts);
}
