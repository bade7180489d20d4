import { defineOperation } from '../contract/define.js';
import { acceptAuthCode } from './auth-code-checks.js';
import type { OperationContext } from './context.js';

export const AuthCode = defineOperation({
  service: 'AuthCodeSending',
  name: 'AuthCode',
  doc: 'Sends a code to a phone by SMS. The code is stored with the message in one transaction and delivered from an outbox, with retries.',
  params: [
    { name: 'code', type: 'string', doc: 'the code to send: 1 to 32 printable characters', personal: 'secret' },
    { name: 'phone', type: 'string', doc: 'the phone to send it to: optional + and 7 to 15 digits', personal: 'phone' },
  ],
  result: { kind: 'void' },
  writes: true,
  async run(args, ctx: OperationContext) {
    // A dry run (beside the legacy service, which sends the real code) checks what a real call
    // checks and writes nothing: no code stored, no SMS queued, no counter taken.
    await acceptAuthCode(args, ctx, ctx.dryRun === true);
  },
});
