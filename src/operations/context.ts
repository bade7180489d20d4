import type { SmsGuard } from '../sms/sms-guard.js';
import type { Store } from '../store/store.js';

/** How AuthCode treats codes: the abuse limit and the text sent with a code. */
export interface AuthCodePolicy {
  /** Most codes accepted for one phone within an hour. */
  readonly maxPerHour: number;
  /** The SMS text for a code. */
  message(code: string): string;
}

export interface Caller {
  /** The caller's address, as the SMS guard's lists and /48 counter read it. */
  readonly clientAddress: string;
  /** The client it counts as (clientKey): what anything that counts or remembers callers keys by. */
  readonly client: string;
  /**
   * The W3C `traceparent` a request made for this call carries (AuthCode's SMS delivery): our
   * span's while tracing, else undefined (a caller's own header is not passed to a third party).
   * Worked out only when read.
   */
  readonly onwardTraceparent: string | undefined;
}

/** What an operation may use: the store and its policies, and nothing of the wire. */
export interface OperationContext {
  readonly store: Store;
  /** The time of the call, injectable for tests. */
  readonly now: () => Date;
  readonly authCodes: AuthCodePolicy;
  /** AuthCode's protection of the SMS bill (src/sms/); absent: only the per-phone hourly limit. */
  readonly sms?: SmsGuard;
  /**
   * Who called, set per call by the dispatcher: the caller's address (behind a trusted proxy, the
   * forwarded one) is what AuthCode counts per address. Worked out only when read (most
   * operations never do). The operation knows nothing else of the wire.
   */
  readonly caller?: Caller;
  /**
   * Validate only: writes check what they would do and do nothing (AuthCode: no code stored, no
   * SMS queued). Set beside the legacy service, whose answer the client gets (src/shadow).
   */
  readonly dryRun?: boolean;
  /**
   * Told when an operation that writes (`writes` on its definition) succeeded, never in a dry run:
   * the database takes writes again (observe/database-watch.ts).
   */
  readonly onWritten?: () => void;
  /** Told when a code was accepted, so its delivery starts at once rather than at the next poll. */
  readonly onAuthCodeAccepted?: () => void;
  /**
   * Students read per page (default DEFAULT_LIST_PAGE_ROWS): a list longer than one page is
   * answered as pages from one snapshot, so memory stays bounded. 0: lists are always read whole.
   */
  readonly listPageRows?: number;
}

export const DEFAULT_LIST_PAGE_ROWS = 1000;
