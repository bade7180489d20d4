/**
 * Legacy mode's fail-over: when the legacy service cannot answer, the client gets ours (or, with
 * SIS_SHADOW_FALLBACK=off, a 502 with an empty body), every time counted. The legacy service's
 * state is logged once per change with the other dependencies' (observe/shadow-metrics.ts tells
 * it from every comparison), not here.
 *
 * A partitioned legacy service (its connections kept open and silent, new ones never answered)
 * costs each request the whole SIS_SHADOW_TIMEOUT_MS. So once it is known not to answer, requests
 * are not forwarded but failed over at once for a quiet spell (1 s, doubling to 30 s while it goes
 * on). Known from evidence no client chooses (issue 46): a client picks its own requests, and one
 * that asks what the legacy is slow to answer (one slow operation, a huge list) must delay only
 * itself. So a spell needs SILENT_IN_ROW forwarded requests in a row without an answer in time AND
 * either our own probe (LegacyClient.probe: a cheap page on a connection of its own, sent at the
 * first of them, at most one a second) failing within its deadline, or those time-outs coming from
 * SPREAD_CLIENTS distinct clients (clientKey, `ex.client`) across SPREAD_OPERATIONS operations.
 * Any answer, to a forwarded request or to the probe, ends the run and the spell. A spell begun on
 * the clients' evidence sends the probe at once (if none is out) and ends when it answers: clients
 * that choose slow operations together get a spell as long as a probe's answer, no more. After
 * each spell our probe asks again, never a client's request: its answer ends the spell, its
 * failure doubles it (so no client can keep a spell going by being the one asked).
 *
 * Only legacy mode's own requests count: compare mode's copies, which a caller can make stall at
 * will, never change what legacy mode forwards, and this never stops a comparison.
 */
import type { LegacyResult } from './legacy-client.js';

/** Forwarded requests in a row without an answer in time that make a partition, not one slow answer. */
const SILENT_IN_ROW = 3;
/** Without our probe's failure: time-outs from this many distinct clients… */
const SPREAD_CLIENTS = 3;
/** …in this many distinct operations (one slow operation is the legacy's, not a partition). */
const SPREAD_OPERATIONS = 2;
/** Our probe during a run at most this often: a client that times out on purpose sets its pace, not ours. */
const PROBE_GAP_MS = 1000;
const FIRST_QUIET_MS = 1000;
const MAX_QUIET_MS = 30_000;

/** What a request not forwarded during a quiet spell counts as: never sent, so a write may be ours. */
export const NOT_FORWARDED: LegacyResult = {
  ok: false,
  failure: 'timeout',
  message:
    'the legacy service is not answering (requests in a row timed out, and our probe or several clients): not asked until our probe answers',
  reached: false,
  seconds: 0,
};

/** How a request goes: forwarded, or failed over unsent during a quiet spell. */
export type Forwarding = 'forward' | 'not-forwarded';

/** Who sent a forwarded request and what it asked: the clients' evidence of a partition. */
export interface Sender {
  /** The client (clientKey), as rate limits and the access log count it. */
  readonly client: string;
  /** Its operation (null: not known). */
  readonly operation: string | null;
}

/** Distinct values up to a cap: never more than `cap` kept, whatever the clients send. */
class Distinct {
  readonly #seen = new Set<string>();
  constructor(private readonly cap: number) {}
  add(value: string): void {
    if (this.#seen.size < this.cap) this.#seen.add(value);
  }
  get full(): boolean {
    return this.#seen.size >= this.cap;
  }
  clear(): void {
    this.#seen.clear();
  }
}

export class Failover {
  /** The run: forwarded requests in a row without an answer in time, whose, and what they asked. */
  #silentInRow = 0;
  readonly #clients = new Distinct(SPREAD_CLIENTS);
  readonly #operations = new Distinct(SPREAD_OPERATIONS);
  /** Our probe failed during this run. */
  #probeFailed = false;
  /** Which run (or spell) is current: a probe's verdict on an older one is dropped. */
  #run = 0;
  #probing = false;
  #probedAt = -Infinity;
  /** In a quiet spell: requests fail over unsent until our probe answers. */
  #down = false;
  /** Until when the spell runs before the next probe (performance.now() ms), and the next spell's length. */
  #quietUntil = 0;
  #quietMs = FIRST_QUIET_MS;

  constructor(
    private readonly fallback: boolean,
    /** Our own probe of the legacy service: true when it answered within its deadline. */
    private readonly probe: () => Promise<boolean>,
    private readonly counted: (answer: 'ours' | 'bad-gateway') => void = () => undefined,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Whether to forward this request: always, but during a quiet spell (whose end our probe decides). */
  forwarding(): Forwarding {
    if (!this.#down) return 'forward';
    if (!this.#probing && this.now() >= this.#quietUntil) this.#ask(true);
    return 'not-forwarded';
  }

  /** What a forwarded request got: a time-out adds to the run, anything else ends it (and any spell). */
  forwarded(sender: Sender, result: LegacyResult | null): void {
    if (result === null || result.ok || result.failure !== 'timeout') return this.#answered();
    this.#silentInRow++;
    this.#clients.add(sender.client);
    this.#operations.add(sender.operation ?? '');
    const due = this.now() - this.#probedAt >= PROBE_GAP_MS;
    if (due && !this.#probing && !this.#probeFailed && !this.#down) this.#ask(false);
    this.#decide();
  }

  /** The legacy answered: the run and any spell are over. */
  #answered(): void {
    // The common case, every answer: nothing to end (a probe out was sent in a run ended already).
    if (this.#silentInRow === 0 && !this.#down) return;
    this.#run++;
    this.#silentInRow = 0;
    this.#clients.clear();
    this.#operations.clear();
    this.#probeFailed = false;
    this.#down = false;
    this.#quietMs = FIRST_QUIET_MS;
  }

  /** A spell begins once the run is long enough and the evidence is not one client's choice. */
  #decide(): void {
    if (this.#down || this.#silentInRow < SILENT_IN_ROW) return;
    if (!this.#probeFailed && !(this.#clients.full && this.#operations.full)) return;
    this.#down = true;
    this.#quietUntil = this.now() + this.#quietMs;
    // Begun on the clients' evidence: our probe says at once whether the legacy is answering after all.
    if (!this.#probeFailed && !this.#probing) this.#ask(false);
  }

  /** Our probe, one at a time: during a run it is evidence; after a spell it ends or lengthens it. */
  #ask(afterSpell: boolean): void {
    this.#probing = true;
    this.#probedAt = this.now();
    const run = this.#run;
    this.probe()
      .catch(() => false)
      .then((answered) => {
        this.#probing = false;
        // An answer since it was sent has settled that run already.
        if (run !== this.#run) return;
        if (answered) return this.#answered();
        this.#probeFailed = true;
        if (!afterSpell) return this.#decide();
        this.#quietMs = Math.min(this.#quietMs * 2, MAX_QUIET_MS);
        this.#quietUntil = this.now() + this.#quietMs;
      });
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
