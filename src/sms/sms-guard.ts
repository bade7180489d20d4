/**
 * AuthCode's protection of the SMS bill (docs/sms.md), as one check the operation makes before
 * its write, cheapest first: a test number (recorded, never sent nor counted), the number (valid,
 * of an accepted type and country), the ranges an operator stopped, then the velocity counters
 * (address or IPv6 prefix unless trusted, range, country, budgets: in the write's own
 * transaction always, the durable count, and first in Redis when one is configured, which refuses
 * a full counter's codes before they reach the database; docs/decisions.md, 25). A layer in
 * monitor mode decides as it would and only counts and logs its would-be refusal. A dry run makes every check and counts nothing.
 * A refused code is recorded nowhere but in the refusal counts.
 */
import { createHmac, randomBytes } from 'node:crypto';
import type { BlockList } from 'node:net';
import { clientKey, inNetworkList, networkList, siteNetwork } from '../address/client-network.js';
import type { Logger } from '../logging/logger.js';
import type { SmsStore } from '../store/sms-types.js';
import type { AuthCodeOutcome, CounterLimit } from '../store/store.js';
import { BlockedRangeCache } from './blocked-range-cache.js';
import type { NumberType } from './number-types.js';
import { PhonePolicy } from './phone-policy.js';
import type { PhoneReading } from './phone-policy.js';
import type { RedisCounters } from './redis-counters.js';
import { RefusalTally } from './refusal-tally.js';
import { AuthCodeRefusedError, refusalMessage } from './refusal.js';
import type { RefusalReason } from './refusal.js';
import type { SmsRules } from './sms-rules.js';
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
  /** Counted in the write's transaction, whether Redis counted them first or not (docs/decisions.md). */
  readonly counters: readonly CounterLimit[];
  /** Redis found none of them full (the store then counts them without a look first). */
  readonly countersChecked: boolean;
  /** A test number's code: recorded as a test code, nothing sent or counted. */
  readonly test: boolean;
  /** The same code for the same phone within this time is a repeat (0: off). */
  readonly repeatMs: number;
  /** The phone's own limits only watch (monitor mode). */
  readonly monitorPhone: boolean;
  /** The write's outcome (null: it failed); throws AuthCodeRefusedError when the store refused the code. */
  settle(outcome: AuthCodeOutcome | null): Promise<void>;
}

export class SmsGuard {
  readonly tally: RefusalTally;
  readonly #policy: PhonePolicy;
  readonly #blocks: BlockedRangeCache | null;
  readonly #trusted: BlockList | null;
  readonly #monitored: ReadonlySet<RefusalReason>;
  readonly #monitorPhone: boolean;
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
    this.#trusted = networkList(options.rules.trustedAddresses);
    this.#monitored = options.rules.monitored;
    this.#monitorPhone = this.#monitored.has('phone-hourly');
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
    const rules = this.options.rules;
    const verdict = this.#policy.read(request.phone);
    const reading = verdict.reading;
    // A test number as listed or as read (a listed national form, or the E.164 one).
    const tests = rules.testNumbers;
    if (tests.size > 0 && (tests.has(request.phone) || tests.has(reading.phone)))
      return this.testAdmission(reading, request);
    if (verdict.refused !== undefined)
      this.refuse(verdict.refused, reading, request, null, verdict.type === undefined ? {} : { type: verdict.type });
    const block = await this.#blocks?.covering(reading.phone, request.at);
    if (block != null) {
      const seconds = block.until === null ? null : (block.until.getTime() - request.at.getTime()) / 1000;
      this.refuse('blocked-range', reading, request, seconds);
    }
    const velocity = rules.velocity;
    const counted = request.address !== '' && !this.trusted(request.address);
    // A /48 counter beside the prefix's, unless the prefix is the /48 itself.
    const site =
      counted && velocity.perIpv6SiteHour > 0 && velocity.ipv6Prefix !== 48
        ? siteNetwork(request.address, velocity.nat64Prefixes)
        : null;
    const counters = countersFor(velocity, this.#monitored, {
      // Hashed only when counted: the key and the HMAC cost nothing while the limit is off.
      addressHash:
        !counted || velocity.perAddressHour === 0
          ? null
          : await this.hashAddress(clientKey(request.address, velocity.ipv6Prefix, velocity.nat64Prefixes)),
      siteHash: site === null ? null : await this.hashAddress(site),
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
    // Would-be refusals (monitor mode) Redis told: the store, counting the same counters, tells them again.
    let told: Set<string> | null = null;
    if (answer !== 'unavailable') {
      if (answer.full !== null) {
        const full = answer.full;
        this.refuse(
          full.reason as RefusalReason,
          reading,
          request,
          (full.until.getTime() - request.at.getTime()) / 1000,
        );
      }
      for (const c of answer.over) {
        (told ??= new Set()).add(c.reason);
        this.refuse(c.reason as RefusalReason, reading, request, null);
      }
    }
    const taken = answer !== 'unavailable' && !request.dryRun ? counters : [];
    return {
      reading,
      backoff: velocity.backoff,
      // The database counts them always: a Redis lost (or back empty) never starts the hour from zero.
      counters,
      countersChecked: answer !== 'unavailable',
      test: false,
      repeatMs: rules.repeatMs,
      monitorPhone: this.#monitorPhone,
      settle: async (outcome) => {
        if (outcome?.accepted === true) {
          // A repeat is not counted here either: no metric tells a repeat from a new code (a guess's answer).
          if (outcome.repeat === true) return redis?.release(space, taken);
          for (const reason of outcome.monitored ?? [])
            if (told?.has(reason) !== true) this.refuse(reason as RefusalReason, reading, request, null);
          return this.accepted(reading, request.dryRun);
        }
        // A code the phone's own limits refused stays counted against its address (guessing costs).
        const phoneRefusal = outcome?.reason === 'phone-hourly' || outcome?.reason === 'phone-backoff';
        const full = outcome?.counter;
        await redis?.release(
          space,
          taken.filter((c) => c.key !== full && !(phoneRefusal && c.reason === 'address')),
        );
        // A counter Redis had room in is full in the database (Redis came back empty, or missed codes
        // counted while it was away): Redis holds it full from now on, and refuses by itself again.
        const filled = full === undefined ? undefined : taken.find((c) => c.key === full);
        if (filled !== undefined) await redis?.fill(space, filled);
        if (outcome !== null) this.refuse(outcome.reason as RefusalReason, reading, request, outcome.retryAfterSeconds);
      },
    };
  }

  /**
   * A code to a test number: no other check; the store keeps it as a test code, counted only
   * against the number's own hourly limit (in the database), so a leaked test number is no free
   * path for a flood of requests.
   */
  private testAdmission(reading: PhoneReading, request: AdmitRequest): Admission {
    const limit = this.options.rules.testCodesPerHour;
    const hour = Math.floor(request.at.getTime() / 3_600_000);
    const counters: CounterLimit[] =
      limit > 0
        ? [
            {
              key: `t:${reading.phone}:h${hour}`,
              limit,
              until: new Date((hour + 1) * 3_600_000),
              reason: 'test-hourly',
            },
          ]
        : [];
    return {
      reading,
      backoff: false,
      counters,
      countersChecked: false,
      test: true,
      repeatMs: 0,
      monitorPhone: false,
      settle: async (outcome) => {
        if (outcome?.accepted === false)
          this.refuse(outcome.reason as RefusalReason, reading, request, outcome.retryAfterSeconds);
      },
    };
  }

  private trusted(address: string): boolean {
    const rules = this.options.rules;
    // IPv4-mapped always; other embeddings of a trusted IPv4 address only as the operator says.
    return (
      this.#trusted !== null &&
      inNetworkList(this.#trusted, address, { embedded: rules.trustedEmbedded, nat64: rules.velocity.nat64Prefixes })
    );
  }

  private accepted(reading: PhoneReading, dryRun: boolean): void {
    if (dryRun) return;
    this.tally.accepted(reading.country);
    if (this.#budgetReached) {
      this.#budgetReached = false;
      this.options.log.warn('SMS budget has room again: AuthCode accepts codes');
    }
  }

  /**
   * Refuses the code for `reason` (throws AuthCodeRefusedError), or, when its layer only watches
   * (monitor mode), counts the would-be refusal and returns.
   */
  private refuse(
    reason: RefusalReason,
    reading: PhoneReading,
    request: AdmitRequest,
    retryAfterSeconds: number | null,
    extra: { type?: NumberType } = {},
  ): void {
    if (this.#monitored.has(reason)) {
      if (!request.dryRun) this.tally.monitored(reason, reading.country, reading.range, request.at);
      return;
    }
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
