import { defineOperation } from '../contract/define.js';
import type { OperationContext } from './context.js';

export const GetServerKeyAndSender = defineOperation({
  service: 'PushNotificationMobile',
  name: 'GetServerKeyAndSender',
  doc: 'Requests the server key and sender for push notifications. The documented answer is empty.',
  params: [],
  result: { kind: 'void' },
  async run(_args, _ctx: OperationContext) {
    // The spec shows this result empty; extended results are a separate mode.
  },
});
