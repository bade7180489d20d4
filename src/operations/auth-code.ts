import { defineOperation } from '../contract/define.js';
import { QuotaExceededError } from '../errors/errors.js';
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
    const phone = normalizePhone(args.phone);
    const code = checkCode(args.code);
    const { maxPerHour } = ctx.authCodes;
    const outcome = await ctx.store.acceptAuthCode({
      code,
      phone,
      at: ctx.now(),
      message: ctx.authCodes.message(code),
      maxPerHour,
    });
    if (!outcome.accepted) {
      const minutes = Math.max(1, Math.ceil(outcome.retryAfterSeconds / 60));
      throw new QuotaExceededError(
        `Too many codes for this phone: at most ${maxPerHour} an hour. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`,
      );
    }
    ctx.onAuthCodeAccepted?.();
  },
});
