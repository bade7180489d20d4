/**
 * What the SMS protection counts for operators: refusals by reason, would-be refusals of layers in
 * monitor mode and codes queued by country (this process's, for the metrics), and refused
 * and would-be refused codes by period, reason, country and range (all processes', in the
 * database, for `sis outbox stats`; a would-be one as `monitor:<reason>`). Refusals are added up
 * in memory and written every few seconds, so an attack's thousands of refusals cost a few
 * writes, not one each. A would-be refusal is logged at most once a minute per reason.
 */
import type { Logger } from '../logging/logger.js';
import type { RefusalCount, SmsStore } from '../store/sms-types.js';
import { MONITOR_PREFIX, periodStart } from '../store/sms-types.js';
import type { RefusalReason } from './refusal.js';

export const REFUSALS_FLUSH_MS = 5000;
/** A reason's would-be refusals (monitor mode) are logged at most this often. */
const MONITOR_LOG_MS = 60_000;

export class RefusalTally {
  /** Refusals by reason since start (sis_auth_code_refusals_total). */
  readonly refusals = new Map<RefusalReason, number>();
  /** Would-be refusals of layers in monitor mode, by reason (sis_auth_code_refusals_total{mode="monitor"}). */
  readonly monitoredRefusals = new Map<RefusalReason, number>();
  /** Codes queued by country, `unknown` when it cannot be told (sis_sms_queued_total). */
  readonly queued = new Map<string, number>();
  /** Per reason: when its would-be refusals were last logged, and how many since. */
  #monitorLog = new Map<RefusalReason, { at: number; since: number }>();
  #pending = new Map<string, RefusalCount>();
  #timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly store: SmsStore | null,
    private readonly log: Logger,
  ) {}

  start(): void {
    this.#timer ??= setInterval(() => void this.flush(), REFUSALS_FLUSH_MS).unref();
  }

  refused(reason: RefusalReason, country: string | null, range: string, at: Date): void {
    this.refusals.set(reason, (this.refusals.get(reason) ?? 0) + 1);
    this.pend(reason, country, range, at);
  }

  /** A layer in monitor mode would have refused a code: counted, and logged at most once a minute per reason. */
  monitored(reason: RefusalReason, country: string | null, range: string, at: Date): void {
    this.monitoredRefusals.set(reason, (this.monitoredRefusals.get(reason) ?? 0) + 1);
    this.pend(`${MONITOR_PREFIX}${reason}`, country, range, at);
    const now = Date.now();
    const logged = this.#monitorLog.get(reason);
    if (logged !== undefined && now - logged.at < MONITOR_LOG_MS) {
      logged.since++;
      return;
    }
    this.#monitorLog.set(reason, { at: now, since: 0 });
    this.log.warn(
      { reason, moreSinceLastLine: logged?.since ?? 0 },
      `SMS guard in monitor mode: a code would have been refused (${reason}) and was accepted; see sis outbox stats, and enforce the layer (SIS_SMS_GUARD) once its limit fits your peaks`,
    );
  }

  private pend(reason: string, country: string | null, range: string, at: Date): void {
    const period = periodStart(at);
    const key = `${period.getTime()}|${reason}|${country ?? ''}|${range}`;
    const row = this.#pending.get(key);
    this.#pending.set(key, {
      periodStart: period,
      reason,
      country: country ?? '',
      range,
      refused: (row?.refused ?? 0) + 1,
    });
  }

  accepted(country: string | null): void {
    const key = country ?? 'unknown';
    this.queued.set(key, (this.queued.get(key) ?? 0) + 1);
  }

  /** Writes the refusals counted since the last flush (kept for the next one if the write fails). */
  async flush(): Promise<void> {
    if (this.store === null || this.#pending.size === 0) return;
    const rows = [...this.#pending.values()];
    this.#pending = new Map();
    try {
      await this.store.addSmsRefusals(rows);
    } catch (err) {
      for (const r of rows) {
        const key = `${r.periodStart.getTime()}|${r.reason}|${r.country}|${r.range}`;
        const now = this.#pending.get(key);
        this.#pending.set(key, { ...r, refused: r.refused + (now?.refused ?? 0) });
      }
      this.log.debug({ err }, 'SMS refusal counts not written yet (retried)');
    }
  }

  async stop(): Promise<void> {
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#timer = null;
    await this.flush();
  }
}
