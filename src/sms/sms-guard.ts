/**
 * AuthCode's protection of the SMS bill (docs/sms.md), as one check the operation makes before
 * its write, cheapest first: the number (valid, of an accepted type and country), the ranges an
 * operator stopped, then the velocity counters (address, range, country, budgets: in Redis when
 * one is configured, else in the write's own transaction). A dry run makes every check and
 * counts nothing. A refused code is recorded nowhere but in the refusal counts.
 */
import { createHmac, randomBytes } from 'node:crypto';
import type { Logger } from '../logging/logger.js';
import type { SmsStore } from '../store/sms-types.js';
import type { AuthCodeOutcome, CounterLimit } from '../store/store.js';
import { BlockedRangeCache } from './blocked-range-cache.js';
import { PhonePolicy } from './phone-policy.js';
import type { PhoneReading } from './phone-policy.js';
import type { RedisCounters } from './redis-counters.js';
import { AuthCodeRefusedError, refusalMessage } from './refusal.js';
import type { RefusalReason } from './refusal.js';
import { RefusalTally } from './refusal-tally.js';
import type { NumberType, SmsRules } from './sms-rules.js';
import { countersFor, countsCountries } from './velocity-counters.js';

const SWEEP_MS = 60_000;

export interface SmsGuardOptions {
  readonly rules: SmsRules;
  /** Most codes per phone an hour (the store counts it; refusals name it). */
  readonly maxPerHour: number;
  /** Where refusals, blocks and the address key are kept; null: nowhere (tools, tests). */
  readonly store: SmsStore | null;
  /** The counters in Redis; null: in the database. */
  readonly redis: RedisCounters | null;
  readonly log: Logger;
}

export interface AdmitRequest {
  /** The phone in its normal form (normalizePhone, operations/auth-code-checks.ts). */
  readonly phone: string;
  /** The client's address ('' when unknown: not counted). */
  readonly address: string;
  readonly at: Date;
  /** Every check, nothing counted. */
  readonly dryRun: boolean;
}

/** A code the guard let through: what the store's write needs, and how its outcome is told back. */
export interface Admission {
  readonly reading: PhoneReading;
  readonly backoff: boolean;
  /** Counted in the write's transaction (none when Redis counted them). */
  readonly counters: readonly CounterLimit[];
  /** The write's outcome (null: it failed); throws AuthCodeRefusedError when the store refused the code. */
  settle(outcome: AuthCodeOutcome | null): Promise<void>;
}

export class SmsGuard {
  readonly tally: RefusalTally;
  readonly #policy: PhonePolicy;
  readonly #blocks: BlockedRangeCache | null;
  #loading: Promise<void> | null = null;
  #addressKey: Promise<string> | null = null;
  #budgetReached = false;
  #sweeper: NodeJS.Timeout | null = null;

  constructor(private readonly options: SmsGuardOptions) {
    this.#policy = new PhonePolicy(options.rules.phone, countsCountries(options.rules.velocity));
    this.#blocks =
      options.store === null
        ? null
        : new BlockedRangeCache(options.store, (err) => options.log.debug({ err }, 'blocked SMS ranges not read yet'));
    this.tally = new RefusalTally(options.store, options.log);
  }

  /** Loads what the rules need (the phone metadata) and starts the periodic work; rejects on a region the metadata does not know. */
  async start(): Promise<void> {
    await this.loaded();
    await this.#blocks?.load();
    this.tally.start();
    const store = this.options.store;
    if (store !== null) {
      this.#sweeper ??= setInterval(() => {
        store.sweepSms(new Date()).catch((err: unknown) => this.options.log.debug({ err }, 'SMS counters not swept'));
      }, SWEEP_MS).unref();
    }
  }

  async stop(): Promise<void> {
    if (this.#sweeper !== null) clearInterval(this.#sweeper);
    this.#sweeper = null;
    await this.tally.stop();
    await this.options.redis?.close();
  }

  /** Every check before the write; throws AuthCodeRefusedError for a refused code. */
  async admit(request: AdmitRequest): Promise<Admission> {
    await this.loaded();
    const verdict = this.#policy.read(request.phone);
    const reading = verdict.reading;
    if (verdict.refused !== undefined)
      this.refuse(verdict.refused, reading, request, null, verdict.type === undefined ? {} : { type: verdict.type });
    const block = await this.#blocks?.covering(reading.phone, request.at);
    if (block != null) {
      const seconds = block.until === null ? null : (block.until.getTime() - request.at.getTime()) / 1000;
      this.refuse('blocked-range', reading, request, seconds);
    }
    const counters = countersFor(this.options.rules.velocity, {
      // Hashed only when counted: the key and the HMAC cost nothing while the limit is off.
      addressHash:
        request.address === '' || this.options.rules.velocity.perAddressHour === 0
          ? null
          : await this.hashAddress(request.address),
      range: reading.range,
      country: reading.country,
      at: request.at,
    });
    const redis = this.options.redis;
    const space = redis === null ? '' : await this.redisSpace();
    const answer =
      redis === null
        ? 'unavailable'
        : await (request.dryRun ? redis.peek(space, counters) : redis.take(space, counters));
    if (answer !== null && answer !== 'unavailable') {
      this.refuse(
        answer.reason as RefusalReason,
        reading,
        request,
        (answer.until.getTime() - request.at.getTime()) / 1000,
      );
    }
    const taken = answer === null && !request.dryRun ? counters : [];
    return {
      reading,
      backoff: this.options.rules.velocity.backoff,
      counters: answer === 'unavailable' ? counters : [],
      settle: async (outcome) => {
        if (outcome?.accepted === true) return this.accepted(reading, request.dryRun);
        await redis?.release(space, taken);
        if (outcome !== null) this.refuse(outcome.reason as RefusalReason, reading, request, outcome.retryAfterSeconds);
      },
    };
  }

  private accepted(reading: PhoneReading, dryRun: boolean): void {
    if (dryRun) return;
    this.tally.accepted(reading.country);
    if (this.#budgetReached) {
      this.#budgetReached = false;
      this.options.log.warn('SMS budget has room again: AuthCode accepts codes');
    }
  }

  private refuse(
    reason: RefusalReason,
    reading: PhoneReading,
    request: AdmitRequest,
    retryAfterSeconds: number | null,
    extra: { type?: NumberType } = {},
  ): never {
    if (!request.dryRun) {
      this.tally.refused(reason, reading.country, reading.range, request.at);
      if ((reason === 'budget-hourly' || reason === 'budget-daily') && !this.#budgetReached) {
        this.#budgetReached = true;
        const setting = reason === 'budget-hourly' ? 'SIS_SMS_HOURLY_BUDGET' : 'SIS_SMS_DAILY_BUDGET';
        this.options.log.error(
          { reason, retryAfterSeconds },
          `SMS budget reached (${setting}): AuthCode refuses every code until its window ends; raise the budget to send more`,
        );
      }
    }
    const facts = { retryAfterSeconds, maxPerHour: this.options.maxPerHour, ...extra };
    throw new AuthCodeRefusedError(reason, refusalMessage(reason, facts));
  }

  private loaded(): Promise<void> {
    this.#loading ??= this.#policy.load();
    return this.#loading;
  }

  /** A keyed hash (HMAC-SHA256 under the database's key): the address itself is never kept. */
  private async hashAddress(address: string): Promise<string> {
    return createHmac('sha256', await this.key())
      .update(address)
      .digest('base64url')
      .slice(0, 22);
  }

  /** The database's name in Redis: derived from its key, so its instances share counters and no other does. */
  private async redisSpace(): Promise<string> {
    return createHmac('sha256', await this.key())
      .update('redis-space')
      .digest('base64url')
      .slice(0, 12);
  }

  /** The database's key, read once (again after a failure: the database may not be up yet). */
  private key(): Promise<string> {
    this.#addressKey ??= this.options.store?.smsAddressKey() ?? Promise.resolve(randomBytes(32).toString('hex'));
    return this.#addressKey.catch((err: unknown) => {
      this.#addressKey = null;
      throw err;
    });
  }
}
