/**
 * Legacy mode's fail-over: when the legacy service cannot answer, the client gets ours (or, with
 * SIS_SHADOW_FALLBACK=off, a 502 with an empty body), every time counted. The legacy service's
 * state is logged once per change with the other dependencies' (observe/shadow-metrics.ts tells
 * it from every comparison), not here.
 */

export class Failover {
  constructor(
    private readonly fallback: boolean,
    private readonly counted: (answer: 'ours' | 'bad-gateway') => void = () => undefined,
  ) {}

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
