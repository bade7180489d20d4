import type { Store } from '../store/store.js';

/** How AuthCode treats codes: the abuse limit and the text sent with a code. */
export interface AuthCodePolicy {
  /** Most codes accepted for one phone within an hour. */
  readonly maxPerHour: number;
  /** The SMS text for a code. */
  message(code: string): string;
}

/** What an operation may use: the store and its policies, and nothing of the wire. */
export interface OperationContext {
  readonly store: Store;
  /** The time of the call, injectable for tests. */
  readonly now: () => Date;
  readonly authCodes: AuthCodePolicy;
  /** Told when a code was accepted, so its delivery starts at once rather than at the next poll. */
  readonly onAuthCodeAccepted?: () => void;
}

export const DEFAULT_AUTH_CODE_POLICY: AuthCodePolicy = {
  maxPerHour: 5,
  message: (code) => `Your verification code is ${code}`,
};
