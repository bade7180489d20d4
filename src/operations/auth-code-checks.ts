/**
 * AuthCode's checks and write, apart from its wire description (auth-code.ts), so that a dry run
 * (every check, nothing written, no SMS) runs exactly the checks a real call does: the input,
 * the SMS protection (src/sms/: test numbers, number, blocks, velocity counters), then the
 * store's per-phone checks (a repeat of a code just accepted, the limits), which a real call
 * takes in the same transaction as the code and its message.
 */
import { InvalidArgumentError } from '../errors/errors.js';
import { AuthCodeRefusedError, refusalMessage } from '../sms/refusal.js';
import type { RefusalReason } from '../sms/refusal.js';
import type { AuthCodeOutcome } from '../store/store.js';
import type { OperationContext } from './context.js';

export interface AuthCodeArgs {
  readonly code: string | null;
  readonly phone: string | null;
}

/**
 * Accepts the code (stored, its SMS queued) or throws what AuthCode answers: InvalidArgumentError
 * for bad input, AuthCodeRefusedError for a refused code. `dryRun`: the same checks and the same
 * refusals, and nothing stored, queued or counted.
 */
export async function acceptAuthCode(args: AuthCodeArgs, ctx: OperationContext, dryRun = false): Promise<void> {
  const phone = normalizePhone(args.phone);
  const code = checkCode(args.code);
  const at = ctx.now();
  const { maxPerHour } = ctx.authCodes;
  const admission = await ctx.sms?.admit({ phone, address: ctx.caller?.clientAddress ?? '', at, dryRun });
  let outcome: AuthCodeOutcome | null = null;
  try {
    outcome = await ctx.store.acceptAuthCode({
      code,
      phone: admission?.reading.phone ?? phone,
      at,
      message: ctx.authCodes.message(code),
      maxPerHour,
      // Every field written, absent ones undefined: no spreads on the request path (see withCaller, dispatch.ts).
      backoff: admission?.backoff,
      country: admission?.reading.country,
      counters: admission?.counters,
      countersChecked: admission?.countersChecked,
      range: admission?.reading.range,
      repeatMs: admission?.repeatMs,
      monitorPhone: admission?.monitorPhone,
      test: admission?.test,
      // Read here only: no other operation's request looks at its trace context.
      traceparent: ctx.caller?.onwardTraceparent,
      dryRun,
    });
  } finally {
    // Told even when the write failed: counters taken for the code are given back.
    await admission?.settle(outcome);
  }
  if (!outcome.accepted) {
    const reason = outcome.reason as RefusalReason;
    throw new AuthCodeRefusedError(
      reason,
      refusalMessage(reason, { retryAfterSeconds: outcome.retryAfterSeconds, maxPerHour }),
    );
  }
  // A repeat or a test code queued no message: nothing to wake the outbox for.
  if (!dryRun && outcome.repeat !== true && admission?.test !== true) ctx.onAuthCodeAccepted?.();
}

/**
 * AuthCode's input rules. A phone is an optional `+` and 7 to 15 digits once spaces and dashes
 * are removed (E.164 allows 15); it is stored in that normal form so limits count one phone once.
 * A code is 1 to 32 printable characters.
 */
function normalizePhone(phone: string | null): string {
  if (phone === null) throw new InvalidArgumentError('Missing phone: send the phone number the code is for.');
  const normal = normalPhone(phone);
  if (normal === null) {
    throw new InvalidArgumentError(
      'Invalid phone: expected an optional + followed by 7 to 15 digits (spaces and dashes are ignored).',
    );
  }
  return normal;
}

/** The phone in that normal form, or null when it is not a phone by these rules (SIS_SMS_TEST_NUMBERS reads them too). */
export function normalPhone(phone: string): string | null {
  const compact = phone.replace(/[\s-]/g, '');
  return /^\+?[0-9]{7,15}$/.test(compact) ? compact : null;
}

function checkCode(code: string | null): string {
  if (code === null) throw new InvalidArgumentError('Missing code: send the code to deliver.');
  const chars = [...code];
  if (chars.length < 1 || chars.length > 32 || code.trim() === '' || /[\p{C}]/u.test(code)) {
    throw new InvalidArgumentError('Invalid code: expected 1 to 32 printable characters.');
  }
  return code;
}
