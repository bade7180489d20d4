/**
 * The phone number rules (docs/sms.md): a number is read with libphonenumber's full metadata
 * (national numbers in SIS_SMS_DEFAULT_REGION's format), and refused when it is not valid, of a
 * refused type (premium-rate, toll-free…) or of a country outside SIS_SMS_COUNTRIES. The
 * metadata is large (slow to load, megabytes in memory): it is loaded once, and only when a rule
 * needs it, so a service whose rules are all off never pays for it.
 */
import type * as Max from 'libphonenumber-js/max';
import type { CountryCode } from 'libphonenumber-js/max';
import type { NumberType } from './number-types.js';
import type { PhoneRules } from './sms-rules.js';

/** A phone as the limits count it. */
export interface PhoneReading {
  /** As stored and sent: E.164 when the number was understood, else as written (compact). */
  readonly phone: string;
  /** ISO 3166 code, or null when it cannot be told. */
  readonly country: string | null;
  /** The number without its last four digits: the range limits and blocks apply to. */
  readonly range: string;
}

export type NumberRefusal = 'invalid' | 'number-type' | 'country';

export type PhoneVerdict =
  | { readonly reading: PhoneReading; readonly refused?: undefined }
  | { readonly reading: PhoneReading; readonly refused: NumberRefusal; readonly type?: NumberType };

type Library = typeof Max;

let library: Promise<Library> | null = null;

/** The library with its full metadata, imported once per process. */
export function loadPhoneMetadata(): Promise<Library> {
  library ??= import('libphonenumber-js/max');
  return library;
}

export class PhonePolicy {
  /** Whether any rule needs the metadata (otherwise numbers are taken as written). */
  readonly needsMetadata: boolean;
  #lib: Library | null = null;

  /** `needCountry`: a limit counts per country, so numbers are read even when no rule here is on. */
  constructor(
    private readonly rules: PhoneRules,
    needCountry: boolean,
  ) {
    this.needsMetadata =
      needCountry ||
      rules.defaultRegion !== null ||
      rules.refuseInvalid ||
      rules.refuseTypes.size > 0 ||
      rules.countries !== null;
  }

  /** Loads the metadata when a rule needs it; rejects when SIS_SMS_DEFAULT_REGION is not a region it knows. */
  async load(): Promise<void> {
    if (!this.needsMetadata || this.#lib !== null) return;
    const lib = await loadPhoneMetadata();
    const region = this.rules.defaultRegion;
    if (region !== null && !lib.isSupportedCountry(region)) {
      throw new Error(
        `SIS_SMS_DEFAULT_REGION=${region}: not a region the phone metadata knows; expected an ISO 3166 code such as SA`,
      );
    }
    this.#lib = lib;
  }

  /** Reads a phone in its normal form (optional `+` and digits); call `load` first. */
  read(compact: string): PhoneVerdict {
    const lib = this.#lib;
    const region = this.rules.defaultRegion;
    // What cannot be told (no metadata needed, or no region and no +) is taken as written.
    if (lib === null || (region === null && !compact.startsWith('+'))) return this.unknown(compact);
    const parsed = lib.parsePhoneNumberFromString(compact, (region ?? undefined) as CountryCode | undefined);
    if (parsed === undefined) {
      return this.rules.refuseInvalid ? { reading: plain(compact, null), refused: 'invalid' } : this.unknown(compact);
    }
    const valid = parsed.isValid();
    const country = parsed.country ?? null;
    const reading = plain(valid ? parsed.number : compact, country);
    if (!valid && this.rules.refuseInvalid) return { reading, refused: 'invalid' };
    const type = typeName(parsed.getType());
    if (type !== null && this.rules.refuseTypes.has(type)) return { reading, refused: 'number-type', type };
    if (this.rules.countries !== null && (country === null || !this.rules.countries.has(country)))
      return { reading, refused: 'country' };
    return { reading };
  }

  /** No country known: refused only when countries are restricted (the fence would have a hole otherwise). */
  private unknown(compact: string): PhoneVerdict {
    const reading = plain(compact, null);
    return this.rules.countries !== null && this.#lib !== null ? { reading, refused: 'country' } : { reading };
  }
}

function plain(phone: string, country: string | null): PhoneReading {
  return { phone, country, range: phone.slice(0, Math.max(1, phone.length - 4)) };
}

/** `PREMIUM_RATE` → `premium-rate`. */
function typeName(type: string | undefined): NumberType | null {
  return type === undefined ? null : (type.toLowerCase().replace(/_/g, '-') as NumberType);
}
