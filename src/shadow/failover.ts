/**
 * Legacy mode's fail-over: when the legacy service cannot answer, the client gets ours (or, with
 * SIS_SHADOW_FALLBACK=off, a 502 with an empty body), every time counted. The legacy service's
 * state is logged once per change with the other dependencies' (observe/shadow-metrics.ts tells
 * it from every comparison), not here.
 *
 * A partitioned legacy service (its connections kept open and silent, new ones never answered)
 * costs each request the whole SIS_SHADOW_TIMEOUT_MS. So once SILENT_IN_ROW of the requests legacy
 * mode forwards in a row got no answer in time, it is taken as not answering: requests are not
 * forwarded but failed over at once for a quiet spell (1 s, doubling to 30 s while it goes on),
 * after which one request at a time is forwarded again to find out; any answer ends it. Only legacy
 * mode's own requests count: compare mode's copies, which a caller can make stall at will, never
 * change what legacy mode forwards, and this never stops a comparison.
 */
import type { LegacyResult } from './legacy-client.js';

/** Forwarded requests in a row without an answer in time that make a partition, not one slow answer. */
const SILENT_IN_ROW = 3;
const FIRST_QUIET_MS = 1000;
const MAX_QUIET_MS = 30_000;

/** What a request not forwarded during a quiet spell counts as: never sent, so a write may be ours. */
export const NOT_FORWARDED: LegacyResult = {
  ok: false,
  failure: 'timeout',
  message: `the legacy service answered none of the last ${SILENT_IN_ROW} requests in time: not asked until a probe answers`,
  reached: false,
  seconds: 0,
};

/** How a request goes: forwarded, forwarded as the probe of a quiet spell, or failed over unsent. */
export type Forwarding = 'forward' | 'probe' | 'not-forwarded';

export class Failover {
  #silentInRow = 0;
  /** Until when requests are failed over unsent (performance.now() ms), and the next spell's length. */
  #quietUntil = 0;
  #quietMs = FIRST_QUIET_MS;
  #probing = false;

  constructor(
    private readonly fallback: boolean,
    private readonly counted: (answer: 'ours' | 'bad-gateway') => void = () => undefined,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Whether to forward this request: always, but during a quiet spell, and one probe at a time after it. */
  forwarding(): Forwarding {
    if (this.#silentInRow < SILENT_IN_ROW) return 'forward';
    if (this.#probing || this.now() < this.#quietUntil) return 'not-forwarded';
    this.#probing = true;
    return 'probe';
  }

  /** What a forwarded request got: a time-out counts towards a quiet spell, anything else ends it. */
  forwarded(how: Exclude<Forwarding, 'not-forwarded'>, result: LegacyResult | null): void {
    if (how === 'probe') this.#probing = false;
    if (result === null || result.ok || result.failure !== 'timeout') {
      this.#silentInRow = 0;
      this.#quietMs = FIRST_QUIET_MS;
      return;
    }
    this.#silentInRow++;
    // The probe's time-out lengthens the spell; others (sent before it began) start it only once.
    if (how === 'probe') this.#quietMs = Math.min(this.#quietMs * 2, MAX_QUIET_MS);
    if (how === 'probe' || this.#silentInRow === SILENT_IN_ROW) this.#quietUntil = this.now() + this.#quietMs;
  }

  /**
   * The legacy service failed: true when we answer instead. `mayAnswer` is false for a write the
   * legacy may have received (it must not be done twice): the client gets a 502 then.
   */
  failed(mayAnswer: boolean): boolean {
    const ours = this.fallback && mayAnswer;
    this.counted(ours ? 'ours' : 'bad-gateway');
    return ours;
  }
}
