import type { Outcome } from './types.js';

/**
 * A read with a stale answer waits for the database at most its budget (SIS_STALE_AFTER_MS, less
 * what the request already waited for the rate limit's Redis): past it, it is answered with that
 * answer at once, while its call goes on (its answer, when it comes, refreshes the stale answers;
 * a late failure changes nothing). Made only for a read that did not answer at once and has a
 * stale answer: the hot path that answers in the same turn (SQLite) never starts a timer.
 */
export class StaleDeadline {
  /** The request has its answer (the call's or the stale one): what settles after is dropped. */
  answered = false;

  constructor(
    private readonly afterMs: number,
    /** The stale outcome, or undefined when it is no longer servable (the call is then waited for). */
    private readonly stale: () => Outcome | undefined,
  ) {}

  /** `pending`'s outcome, or the stale one if `pending` has not settled within the budget. */
  first(pending: Promise<Outcome>): Promise<Outcome> {
    return new Promise<Outcome>((resolve, reject) => {
      const timer = setTimeout(() => {
        if (this.answered) return;
        const outcome = this.stale();
        if (outcome === undefined) return;
        this.answered = true;
        resolve(outcome);
      }, this.afterMs);
      pending.then(
        (outcome) => {
          clearTimeout(timer);
          if (this.answered) return;
          this.answered = true;
          resolve(outcome);
        },
        (error: unknown) => {
          clearTimeout(timer);
          if (this.answered) return;
          this.answered = true;
          reject(error as Error);
        },
      );
    });
  }
}
