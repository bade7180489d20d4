/**
 * AuthCode's write, the same code for SQLite and PostgreSQL: the phone's limits, the code stored
 * and its message queued in the outbox, and the counters, in one transaction, so an answered
 * AuthCode always has a message that some worker will deliver (sql-outbox.ts). SQLite runs the
 * same work without Kysely when it can (sqlite/sqlite-auth-code.ts).
 */
import { sql } from 'kysely';
import type { Kysely } from 'kysely';
// The phone's windows and refusals, the same ones sqlite-auth-code.ts applies.
import * as limits from '../auth-code-window.js';
import type { Dialect } from '../schema/dialect.js';
import type { Database } from '../schema/tables.js';
import type { AuthCodeOutcome, AuthCodeRequest, CounterLimit } from '../store.js';
import { CounterFull, takeCounters } from './sql-sms.js';

export class SqlAuthCode {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
    private readonly lockScope: string,
  ) {}

  async acceptAuthCode(request: AuthCodeRequest): Promise<AuthCodeOutcome> {
    // A counter already full refuses without a transaction: during an attack, the refused codes
    // never queue on the counters' row locks that accepted ones hold. (Redis, when it counts,
    // refuses them before they come here: no look then.)
    if (request.countersChecked !== true) {
      const full = await takeCounters(this.db, request.counters ?? [], true);
      if (full !== null) return limits.counterRefusal(full, request.at);
    }
    try {
      return await this.dialect.writeTransaction(this.db, (trx) => this.acceptIn(trx, request));
    } catch (error) {
      // A counter past its limit rolled the transaction back: nothing of this code is kept.
      if (error instanceof CounterFull) return limits.counterRefusal(error.counter, request.at);
      throw error;
    }
  }

  /** The per-phone limits, then the code and its message, then the counters (a dry run only reads them). */
  private async acceptIn(trx: Kysely<Database>, request: AuthCodeRequest): Promise<AuthCodeOutcome> {
    const at = request.at.toISOString();
    if (request.test === true) {
      // A test number's code: kept as a test code, no message, only its own hourly counter (docs/sms.md).
      const full = await takeCounters(trx, request.counters ?? [], request.dryRun === true);
      if (full !== null) return limits.counterRefusal(full, request.at);
      if (request.dryRun !== true)
        await trx
          .insertInto('auth_codes')
          .values({
            code: request.code,
            phone: request.phone,
            created_at: at,
            country: request.country ?? null,
            test: 1,
          })
          .execute();
      return limits.ACCEPTED;
    }
    // Per phone: two instances counting one phone at once would otherwise both accept the one too many.
    // (SQLite's immediate transaction already serialises every writer.)
    await this.dialect.lockForWrite(trx, `auth-code:${request.phone}`, this.lockScope);
    let monitored: string[] | undefined;
    const phoneOutcome = await this.phoneLimits(trx, request);
    if (phoneOutcome?.accepted === true) {
      // A repeat is refused where a new code would be for a counter already full: the same answer.
      const full = await takeCounters(trx, request.counters ?? [], true);
      return full === null ? phoneOutcome : limits.counterRefusal(full, request.at);
    }
    if (phoneOutcome !== null) {
      if (request.monitorPhone !== true) {
        if (request.dryRun !== true && limits.isPhoneRefusal(phoneOutcome)) await this.countPhoneRefusal(trx, request);
        return phoneOutcome;
      }
      monitored = [phoneOutcome.reason];
    }
    const over: CounterLimit[] = [];
    const outcome = (): AuthCodeOutcome => {
      const reasons = over.length === 0 ? monitored : [...(monitored ?? []), ...over.map((c) => c.reason)];
      return reasons === undefined ? limits.ACCEPTED : { accepted: true, monitored: reasons };
    };
    if (request.dryRun === true) {
      const full = await takeCounters(trx, request.counters ?? [], true, over);
      return full === null ? outcome() : limits.counterRefusal(full, request.at);
    }
    await trx
      .insertInto('auth_codes')
      .values({ code: request.code, phone: request.phone, created_at: at, country: request.country ?? null })
      .execute();
    await trx
      .insertInto('outbox')
      .values({
        phone: request.phone,
        code: request.code,
        message: request.message,
        state: 'pending',
        attempts: 0,
        next_attempt_at: at,
        created_at: at,
        country: request.country ?? null,
        phone_range: request.range ?? null,
        traceparent: request.traceparent ?? null,
      })
      .execute();
    // Counted last (CounterFull rolls the code back): on PostgreSQL a counter's row stays locked
    // from here to the commit, so the codes of every instance wait on the busiest counter (the
    // budget's) only for that.
    await takeCounters(trx, request.counters ?? [], false, over);
    return outcome();
  }

  /** The hourly limit, then the growing wait, then a repeat (auth-code-window.ts); null when none applies. */
  private async phoneLimits(trx: Kysely<Database>, request: AuthCodeRequest): Promise<AuthCodeOutcome | null> {
    const repeats = (request.repeatMs ?? 0) > 0;
    if (request.maxPerHour <= 0 && !repeats) return null;
    let query = trx
      .selectFrom('auth_codes')
      .select(['created_at', 'code'])
      .where('phone', '=', request.phone)
      .orderBy('created_at', 'desc');
    // The phone's codes of the hour (at most its limit); without a limit, only this code's repeats.
    query =
      request.maxPerHour > 0
        ? query.where('created_at', '>', limits.windowStart(request.at)).limit(request.maxPerHour)
        : query.where('code', '=', request.code).where('created_at', '>', limits.repeatStart(request)).limit(1);
    const recent = await query.execute();
    const hourly = limits.hourlyRefusal(recent, request);
    if (hourly !== null) return hourly;
    if (request.backoff === true && request.maxPerHour > 0) {
      const day = await trx
        .selectFrom('auth_codes')
        .select((eb) => [eb.fn.countAll<string | number>().as('n'), eb.fn.max('created_at').as('last')])
        .where('phone', '=', request.phone)
        .where('created_at', '>', limits.backoffStart(request.at))
        .executeTakeFirstOrThrow();
      const refused = await trx
        .selectFrom('sms_counters')
        .select(['hits', 'expires_at'])
        .where('counter', '=', limits.phoneRefusalsKey(request.phone))
        .executeTakeFirst();
      const last = limits.lastAttempt(day.last ?? null, limits.lastRefusalAt(refused?.expires_at));
      const count = Number(day.n) + Number(refused?.hits ?? 0);
      const wait = limits.backoffRefusal(request.phone, count, last, request.maxPerHour, request.at);
      if (wait !== null) return wait;
    }
    return limits.isRepeat(recent, request) ? limits.REPEAT : null;
  }

  /** A guess refused by the phone's limits costs: one more against the phone's wait and its address's counter. */
  private async countPhoneRefusal(trx: Kysely<Database>, request: AuthCodeRequest): Promise<void> {
    const until = limits.phoneRefusalsUntil(request.at);
    await trx
      .insertInto('sms_counters')
      .values({ counter: limits.phoneRefusalsKey(request.phone), hits: 1, expires_at: until })
      .onConflict((oc) =>
        oc.column('counter').doUpdateSet({ hits: sql`${sql.ref('sms_counters.hits')} + 1`, expires_at: until }),
      )
      .execute();
    for (const c of request.counters ?? [])
      if (c.reason === 'address')
        await trx
          .insertInto('sms_counters')
          .values({ counter: c.key, hits: 1, expires_at: c.until.toISOString() })
          .onConflict((oc) => oc.column('counter').doUpdateSet({ hits: sql`${sql.ref('sms_counters.hits')} + 1` }))
          .execute();
  }
}
