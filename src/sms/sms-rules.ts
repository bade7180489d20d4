/**
 * What AuthCode's SMS protection is told by the settings (read in src/config/sms-guard-settings.ts):
 * the phone number rules and the velocity limits. Every limit is off at 0 (or null).
 */

/** Number types as the settings name them: libphonenumber's types in lower case, `-` for `_`. */
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

export interface PhoneRules {
  /** ISO 3166 code of numbers written without a country code; null: such numbers are not understood. */
  readonly defaultRegion: string | null;
  /** Refuse numbers the metadata says are not valid. */
  readonly refuseInvalid: boolean;
  readonly refuseTypes: ReadonlySet<NumberType>;
  /** Countries codes may go to; null: every country. */
  readonly countries: ReadonlySet<string> | null;
}

export interface CountryLimits {
  /** Per ISO code, codes per UTC day. */
  readonly byCountry: ReadonlyMap<string, number>;
  /** Every other country (and numbers whose country cannot be told); null: no limit for them. */
  readonly other: number | null;
}

export interface VelocityLimits {
  /** Growing wait per phone after its hourly limit. */
  readonly backoff: boolean;
  readonly perAddressHour: number;
  readonly perRangeHour: number;
  /** null: no country limit. */
  readonly countryDaily: CountryLimits | null;
  readonly hourlyBudget: number;
  readonly dailyBudget: number;
}

export interface SmsRules {
  readonly phone: PhoneRules;
  readonly velocity: VelocityLimits;
}

/** The defaults' rules with nothing on: what tools and tests without a configuration use. */
export const NO_SMS_RULES: SmsRules = {
  phone: { defaultRegion: null, refuseInvalid: false, refuseTypes: new Set(), countries: null },
  velocity: {
    backoff: false,
    perAddressHour: 0,
    perRangeHour: 0,
    countryDaily: null,
    hourlyBudget: 0,
    dailyBudget: 0,
  },
};
