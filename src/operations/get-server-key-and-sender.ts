import { defineOperation } from '../contract/define.js';
import type { StructSpec } from '../contract/types.js';
import type { OperationContext } from './context.js';

/** What the sender of push notifications needs, as the extended GetServerKeyAndSender answers it. */
export const PushSettings = {
  name: 'PushSettings',
  fields: ['ServerKey', 'SenderId'],
} as const satisfies StructSpec;

const base = { service: 'PushNotificationMobile', name: 'GetServerKeyAndSender', params: [] } as const;

/** As the spec documents it: the answer is empty. */
export const GetServerKeyAndSender = defineOperation({
  ...base,
  doc: 'Requests the server key and sender for push notifications. The documented answer is empty.',
  result: { kind: 'void' },
  async run(_args, _ctx: OperationContext) {
    // The spec shows this result with no fields; SIS_RESULTS=extended answers them.
  },
});

/** Extended results: the stored push settings (null when none are stored). */
export const GetServerKeyAndSenderExtended = defineOperation({
  ...base,
  doc: 'Answers the server key and sender id the sender of push notifications needs.',
  result: { kind: 'struct', struct: PushSettings },
  async run(_args, ctx: OperationContext) {
    return ctx.store.pushSettings();
  },
});
