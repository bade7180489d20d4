/**
 * What AuthCode's SMS protection is told by the settings (read in src/config/sms-guard-settings.ts):
 * the phone number rules, the velocity limits, the trusted networks and test numbers, and which
 * layers only watch (monitor mode). Every limit is off at 0 (or null).
 */
import type { Embedding, Ipv6Prefix, Nat64Prefixes } from '../address/client-network.js';
import type { NumberType } from './number-types.js';
import type { RefusalReason } from './refusal.js';

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
  /** Per ISO code, codes per UTC day (the home country's `home` limit among them once the region is known). */
  readonly byCountry: ReadonlyMap<string, number>;
  /** `home=N`: the limit of SIS_SMS_DEFAULT_REGION's country; null when not given. */
  readonly home: number | null;
  /** Every other country (and numbers whose country cannot be told); null: no limit for them. */
  readonly other: number | null;
}

export interface VelocityLimits {
  /** Growing wait per phone after its hourly limit. */
  readonly backoff: boolean;
  readonly perAddressHour: number;
  /** A native IPv6 client is counted by this prefix (SIS_CLIENT_IPV6_PREFIX, the rate limit's too: clientKey). */
  readonly ipv6Prefix: Ipv6Prefix;
  /** NAT64 prefixes beside the well-known one (SIS_CLIENT_NAT64_PREFIXES, clientKey's too). */
  readonly nat64Prefixes: Nat64Prefixes;
  /** Codes per native IPv6 client's /48 per clock hour, beside its prefix's (0: not counted). */
  readonly perIpv6SiteHour: number;
  readonly perRangeHour: number;
  /** null: no country limit. */
  readonly countryDaily: CountryLimits | null;
  readonly hourlyBudget: number;
  readonly dailyBudget: number;
}

export interface SmsRules {
  readonly phone: PhoneRules;
  readonly velocity: VelocityLimits;
  /** Addresses and CIDR ranges the address layer does not count (SIS_SMS_TRUSTED_ADDRESSES). */
  readonly trustedAddresses: readonly string[];
  /** Embeddings of a trusted IPv4 address trusted as it, beside IPv4-mapped (SIS_SMS_TRUSTED_EMBEDDED). */
  readonly trustedEmbedded: ReadonlySet<Embedding>;
  /** Phones (E.164, or `+`/digits as sent) whose codes are recorded as test codes: never sent, never counted. */
  readonly testNumbers: ReadonlySet<string>;
  /** Most test codes per test number per clock hour (0: no limit). */
  readonly testCodesPerHour: number;
  /** The same code for the same phone again within this time is accepted without a second message (0: off). */
  readonly repeatMs: number;
  /** Reasons whose layer only watches (SIS_SMS_GUARD): counted and logged as would-be refusals, never refused. */
  readonly monitored: ReadonlySet<RefusalReason>;
}
