import { defineOperation } from '../contract/define.js';
import type { OperationContext } from './context.js';

export const GetTokenDevice = defineOperation({
  service: 'PushNotificationMobile',
  name: 'GetTokenDevice',
  doc: 'Looks up the device token stored for an identifier; null when there is none.',
  params: [{ name: 'id', type: 'string', doc: 'the device identifier' }],
  result: { kind: 'string' },
  run(args, ctx: OperationContext) {
    if (args.id === null) return null;
    return ctx.store.deviceToken(args.id);
  },
});
