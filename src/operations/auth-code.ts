import { defineOperation } from '../contract/define.js';
import type { OperationContext } from './context.js';

export const AuthCode = defineOperation({
  service: 'AuthCodeSending',
  name: 'AuthCode',
  doc: 'Submits a code together with a phone value. The pair is recorded with its time.',
  params: [
    { name: 'code', type: 'string', doc: 'the code to send' },
    { name: 'phone', type: 'string', doc: 'the phone it is for' },
  ],
  result: { kind: 'void' },
  async run(args, ctx: OperationContext) {
    await ctx.store.recordAuthCode(args.code, args.phone, ctx.now());
  },
});
