/**
 * Number types as the settings name them: libphonenumber's types in lower case, `-` for `_`. Read
 * by the settings, the phone policy and a refusal alike, so it sits below all of them.
 */
export const NUMBER_TYPES = [
  'premium-rate',
  'shared-cost',
  'toll-free',
  'uan',
  'voicemail',
  'pager',
  'voip',
  'personal-number',
  'fixed-line',
  'mobile',
  'fixed-line-or-mobile',
] as const;
export type NumberType = (typeof NUMBER_TYPES)[number];
