/**
 * Delivery reports in each provider's own format (docs/sms.md, Gateways): Kannel's dlr-url,
 * Twilio's status callback, Vonage's signed receipt and Unifonic's DLR webhook arrive at
 * SIS_SMS_RECEIPT_PATH/<gateway>; SMPP's come over its bind. Each gateway checks its provider's
 * signature or token and reads the report; this records it where our own receipts go (the row's
 * receipt, reason and time, sis_sms_delivery_total). A forged, stale, replayed or malformed report
 * is refused and changes nothing: a message names its gateway, a report without a signed time of
 * its own counts once (its final word), and none counts for a message handed over more than
 * 72 hours before (providers give up on a message by then).
 */
import type { Logger } from '../logging/logger.js';
import type { OutboxStore, ReceiptStatus } from '../store/outbox-types.js';
import type { CheckedReport, ReceiptAnswer } from './delivery-receipts.js';
import type { Callback, Gateway, ProviderReceipt } from './gateways/gateway.js';

/** A report about a message handed over longer ago than this is stale. */
const OLDEST_MS = 72 * 3_600_000;
/** Refusals are logged at most this often. */
const REFUSED_LOG_MS = 60_000;
/** A receipt over a bind may overtake the outbox's record of the message's id there: looked for again this often, this many times. */
const LOOK_AGAIN_MS = 1000;
const LOOKS = 10;

export class ProviderReceipts {
  /** Reports recorded by this process, by status (sis_sms_delivery_total, beside our own receipts). */
  readonly deliveries = new Map<ReceiptStatus, number>();
  readonly #byName: ReadonlyMap<string, Gateway>;
  #refusedLoggedAt = -Infinity;

  constructor(
    /** SIS_SMS_RECEIPT_PATH: a gateway's reports come to `<path>/<gateway>`; null: only over a bind (SMPP). */
    readonly path: string | null,
    gateways: readonly Gateway[],
    private readonly store: OutboxStore,
    private readonly log: Logger,
    private readonly now: () => Date = () => new Date(),
  ) {
    this.#byName = new Map(gateways.filter((g) => g.readCallback !== undefined).map((g) => [g.name, g]));
    for (const g of gateways)
      g.listen?.((receipt) => {
        void this.#fromBind(g.name, receipt);
      });
  }

  /** The gateway a request's URL is for (`<path>/<gateway>`, then the query), or null: not a provider's report. */
  gatewayOf(url: string): string | null {
    if (this.path === null || !url.startsWith(`${this.path}/`)) return null;
    const name = url.slice(this.path.length + 1).split('?', 1)[0]!;
    return this.#byName.has(name) ? name : null;
  }

  /**
   * Checks one callback: refused at once (`failed` when its signature or token is wrong, which
   * the report brake counts), or genuine, and `record` records it: 200 recorded (or a status on
   * the way, ignored); 4xx changes nothing. Stale (410) and replayed (409) are genuine, no failure.
   */
  check(name: string, callback: Callback): CheckedReport {
    const gateway = this.#byName.get(name);
    if (gateway?.readCallback === undefined)
      return { failed: false, answer: this.refused(404, `${name} is not a gateway of SIS_SMS_GATEWAY`) };
    const read = gateway.readCallback(callback, this.now());
    if ('refused' in read) return { failed: read.refused === 401, answer: this.refused(read.refused, read.text) };
    return { record: () => this.record(name, read) };
  }

  private async record(name: string, read: ProviderReceipt): Promise<ReceiptAnswer> {
    if ('ignore' in read) return { status: 200, text: `not recorded: ${read.ignore}` };
    const key =
      'id' in read.message ? read.message : { gateway: name, gatewayMessageId: read.message.gatewayMessageId };
    const sent = await this.store.sentMessage(key);
    const which =
      'id' in read.message ? `message ${read.message.id}` : `${name} message ${read.message.gatewayMessageId}`;
    if (sent === null || (sent.gateway !== null && sent.gateway !== name))
      return this.refused(404, `no ${which} sent by ${name} in the outbox`);
    const now = this.now();
    if (sent.deliveredAt !== null && now.getTime() - sent.deliveredAt.getTime() > OLDEST_MS)
      return this.refused(410, `stale: ${which} was handed over more than 72 hours ago`);
    const result = await this.store.recordReceipt({
      id: sent.id,
      status: read.status,
      reason: read.reason,
      at: read.at ?? now,
      firstOnly: read.at === null,
    });
    if (result === 'unknown') return this.refused(404, `no ${which} in the outbox`);
    if (result === 'replayed') return this.refused(409, `${which} already holds a receipt as new`);
    this.deliveries.set(read.status, (this.deliveries.get(read.status) ?? 0) + 1);
    this.log.debug({ outboxId: sent.id, gateway: name, status: read.status }, 'outbox: delivery report');
    return { status: 200, text: 'recorded' };
  }

  /** A receipt over a bind: no one to answer, so one not yet matched is looked for again a few times. */
  async #fromBind(name: string, receipt: ProviderReceipt): Promise<void> {
    for (let look = 1; ; look++) {
      try {
        const answer = await this.record(name, receipt);
        if (answer.status !== 404 || look >= LOOKS) return;
      } catch (err) {
        this.log.error({ err, gateway: name }, 'outbox: delivery report not recorded');
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, LOOK_AGAIN_MS).unref());
    }
  }

  private refused(status: number, text: string): ReceiptAnswer {
    const now = Date.now();
    if (now - this.#refusedLoggedAt >= REFUSED_LOG_MS) {
      this.#refusedLoggedAt = now;
      this.log.warn(
        { status, problem: text },
        "outbox: a provider's delivery report was refused (logged once a minute)",
      );
    }
    return { status, text };
  }
}
