/**
 * What every SMS gateway is to the outbox (docs/sms.md, Gateways): it sends one message and says
 * what the provider answered; the outbox keeps retries, leases and bookkeeping. A gateway that
 * takes delivery reports also reads the provider's callback (its format, its signature) into a
 * receipt, which the outbox records as it records ours.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { GatewayName } from '../../config/gateway-settings.js';
import type { OutboxMessage, ReceiptStatus } from '../../store/outbox-types.js';

/** A message as a gateway sends it: the outbox's row and its text, the code in it. */
export type OutboundSms = OutboxMessage;

/** What the provider said when it took the message: its id for it, when it gave one. */
export interface Accepted {
  readonly gatewayMessageId: string | null;
}

/**
 * Why a gateway did not take a message. `refused` (the provider said no: a 4xx, an error code),
 * `permanent` (the provider said no and that asking again will not change it: an invalid or
 * unroutable number), `account` (the provider refused our account or configuration, not the
 * number: credentials, balance, a sender id or a message it takes from no one; every code fails
 * alike until an operator fixes it) and `unreachable` (nothing was sent: no connection) let the
 * next gateway of a fallback try; `unsure` (sent, and no answer came: a
 * time-out) stops there, since the provider may have taken it and a second gateway would send the
 * code twice. The outbox tries again later, unless every gateway tried refused for good.
 */
export class GatewayError extends Error {
  constructor(
    readonly kind: RefusalKind | 'unreachable' | 'unsure',
    message: string,
  ) {
    super(message);
    this.name = 'GatewayError';
  }
}

/** How a provider said no: for a while, for good (the number), or to our account or configuration. */
export type RefusalKind = 'refused' | 'permanent' | 'account';

/** A provider's callback as it came: the request's method, URL (path and query), headers and raw body. */
export interface Callback {
  readonly method: string;
  /** The path and query as the request line had them. */
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

/**
 * A callback read: which message (our id, or the provider's), what it says, and when. `ignore`: a
 * status on the way (queued, sent), answered 200 and not recorded.
 */
export type ProviderReceipt =
  | {
      readonly message: { readonly id: number } | { readonly gatewayMessageId: string };
      readonly status: ReceiptStatus;
      readonly reason: string | null;
      /** The provider's signed time, or null when its callbacks carry none (its final word counts once). */
      readonly at: Date | null;
    }
  | { readonly ignore: string };

/**
 * A refused callback: the HTTP status and what was wrong. 401 is for a wrong signature or token
 * only (the report brake counts it as a guess at the key); a genuine one refused for its time is 410.
 */
export interface CallbackRefusal {
  readonly refused: number;
  readonly text: string;
}

export interface Gateway {
  readonly name: GatewayName;
  /** Sends one message; rejects with a GatewayError (its message loggable: never the code). */
  send(message: OutboundSms): Promise<Accepted>;
  /** For `sis check` and the start: a short description of the gateway's answer, or rejects with why none came. Never sends a message. */
  probe(timeoutMs: number): Promise<string>;
  /** Reads a delivery callback in the provider's format, checked as the provider documents; absent: the gateway's receipts come another way. */
  readCallback?(callback: Callback, now: Date): ProviderReceipt | CallbackRefusal;
  /** A gateway holding a connection (SMPP): its receipts come over it, given to `onReceipt`. */
  listen?(onReceipt: (receipt: ProviderReceipt) => void): void;
  close?(): Promise<void>;
}

/** The reason of a failed fetch: the socket's error hidden in its cause, or a time-out. */
export function fetchFailure(err: unknown, timeoutMs: number): GatewayError {
  if (err instanceof Error && err.name === 'TimeoutError')
    return new GatewayError('unsure', `no answer within ${timeoutMs} ms`);
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause : null;
  const why = cause !== null ? ((cause as NodeJS.ErrnoException).code ?? cause.message) : String(err);
  return new GatewayError('unreachable', `unreachable: ${why}`);
}

/** The reason a provider gave, one line of at most 200 characters. */
export function oneLine(text: string): string {
  return text
    .replace(/[\p{C}\s]+/gu, ' ')
    .trim()
    .slice(0, 200);
}

/**
 * A 4xx is the provider refusing this message; a 5xx, the provider in trouble: both let the next
 * gateway try. `kind`: what the provider's answer says (for good: this number will never be
 * taken; account: no number will be, until the account or configuration is fixed).
 */
export function httpRefusal(
  gateway: string,
  status: number,
  detail: string,
  kind: RefusalKind = 'refused',
): GatewayError {
  return new GatewayError(kind, `${gateway} answered ${status}${detail === '' ? '' : `: ${oneLine(detail)}`}`);
}

/** The kind of a provider's refusal by its code: `forGood` names the number's codes, `account` the account's. */
export function refusalOf<T>(code: T, forGood: ReadonlySet<T>, account: ReadonlySet<T>): RefusalKind {
  return account.has(code) ? 'account' : forGood.has(code) ? 'permanent' : 'refused';
}
