/**
 * Legacy mode's fail-over: when the legacy service cannot answer, the client gets ours (or, with
 * SIS_SHADOW_FALLBACK=off, a 502 with an empty body). Logged once per change of state, not once
 * per request, and every time counted.
 */
import type { Logger } from '../logging/logger.js';
import type { LegacyResult } from './legacy-client.js';

export class Failover {
  #down = false;

  constructor(
    private readonly log: Logger,
    private readonly fallback: boolean,
    private readonly counted: (answer: 'ours' | 'bad-gateway') => void = () => undefined,
  ) {}

  /** The legacy service answered: a recovery is logged once. */
  answered(): void {
    if (!this.#down) return;
    this.#down = false;
    this.log.info('legacy service answers again: clients get its answers');
  }

  /**
   * The legacy service failed: true when we answer instead. `mayAnswer` is false for a write the
   * legacy may have received (it must not be done twice): the client gets a 502 then.
   */
  failed(result: Extract<LegacyResult, { ok: false }>, mayAnswer: boolean): boolean {
    const ours = this.fallback && mayAnswer;
    if (!this.#down) {
      this.#down = true;
      this.log.warn(
        { failure: result.failure, reason: result.message },
        this.fallback
          ? 'legacy service not answering: clients get our answers meanwhile (fail-over)'
          : 'legacy service not answering: clients get 502 meanwhile (SIS_SHADOW_FALLBACK=off)',
      );
    }
    this.counted(ours ? 'ours' : 'bad-gateway');
    return ours;
  }
}
