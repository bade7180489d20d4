import { defineOperation } from '../contract/define.js';
import { QuotaExceededError } from '../errors/errors.js';
import type { AuthCodeOutcome, AuthCodeRequest } from '../store/store.js';
import { checkCode, normalizePhone } from './auth-code-input.js';
import type { OperationContext } from './context.js';

export const AuthCode = defineOperation({
  service: 'AuthCodeSending',
  name: 'AuthCode',
  doc: 'Sends a code to a phone by SMS. The code is stored with the message in one transaction and delivered from an outbox, with retries.',
  params: [
    { name: 'code', type: 'string', doc: 'the code to send: 1 to 32 printable characters' },
    { name: 'phone', type: 'string', doc: 'the phone to send it to: optional + and 7 to 15 digits' },
  ],
  result: { kind: 'void' },
  async run(args, ctx: OperationContext) {
    const request = authCodeRequest(args.code, args.phone, ctx);
    // A dry run (beside the legacy service, which sends the real one) checks exactly what a real
    // call checks, and writes nothing: no code stored, no SMS queued.
    const outcome = ctx.dryRun === true ? await dryRunAuthCode(request, ctx) : await ctx.store.acceptAuthCode(request);
    refuseOver(outcome, request.maxPerHour);
    if (ctx.dryRun !== true) ctx.onAuthCodeAccepted?.();
  },
});

/** The input checks (phone rules, code rules), in the order a refusal names them. */
export function authCodeRequest(code: string | null, phone: string | null, ctx: OperationContext): AuthCodeRequest {
  const normalized = normalizePhone(phone);
  const checked = checkCode(code);
  return {
    code: checked,
    phone: normalized,
    at: ctx.now(),
    message: ctx.authCodes.message(checked),
    maxPerHour: ctx.authCodes.maxPerHour,
  };
}

/**
 * AuthCode's validate-only path: every check a real call makes before it writes, the limit
 * counted from the stored codes, nothing written. A new check of the real path belongs in
 * `authCodeRequest` or here, so the dry run keeps making it.
 */
export function dryRunAuthCode(request: AuthCodeRequest, ctx: OperationContext): Promise<AuthCodeOutcome> {
  return ctx.store.checkAuthCode(request);
}

function refuseOver(outcome: AuthCodeOutcome, maxPerHour: number): void {
  if (outcome.accepted) return;
  const minutes = Math.max(1, Math.ceil(outcome.retryAfterSeconds / 60));
  throw new QuotaExceededError(
    `Too many codes for this phone: at most ${maxPerHour} an hour. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`,
  );
}
