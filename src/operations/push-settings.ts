import type { StructSpec } from '../contract/types.js';

/** What the sender of push notifications needs, as the extended GetServerKeyAndSender answers it. */
export const PushSettings = {
  name: 'PushSettings',
  fields: ['ServerKey', 'SenderId'],
} as const satisfies StructSpec;
