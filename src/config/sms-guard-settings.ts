/**
 * The kinds of AuthCode's SMS protection settings (docs/sms.md): the number rules and the country
 * limits, each checked so a wrong value stops the start with its name and what is expected.
 */
import { NUMBER_TYPES } from '../sms/sms-rules.js';
import type { CountryLimits, NumberType } from '../sms/sms-rules.js';
import type { Kind, Parsed } from './parse-settings.js';

const COUNTRY = /^[A-Z]{2}$/;

/** ISO 3166 code of numbers written without a country code; null: such numbers are taken as written. */
export const defaultRegion: Kind<string | null> = {
  parse: (raw) => {
    const region = raw.trim().toUpperCase();
    if (region === '') return { value: null };
    return COUNTRY.test(region) ? { value: region } : { problem: 'expected an ISO 3166 country code such as SA' };
  },
  unset: null,
  shown: (raw) => raw.trim().toUpperCase(),
};

function items(raw: string): string[] {
  return raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

/** `invalid` and number types, comma-separated; `none`: nothing refused. */
export function parseRefuseTypes(raw: string): Parsed<{ invalid: boolean; types: ReadonlySet<NumberType> }> {
  if (/^\s*none\s*$/i.test(raw)) return { value: { invalid: false, types: new Set() } };
  const types = new Set<NumberType>();
  let invalid = false;
  for (const item of items(raw.toLowerCase())) {
    if (item === 'invalid') invalid = true;
    else if ((NUMBER_TYPES as readonly string[]).includes(item)) types.add(item as NumberType);
    else
      return {
        problem: `unknown ${JSON.stringify(item)}; expected none, or some of invalid, ${NUMBER_TYPES.join(', ')}`,
      };
  }
  return { value: { invalid, types } };
}

/** ISO 3166 codes, comma-separated. */
export function parseCountries(raw: string): Parsed<ReadonlySet<string>> {
  const codes = items(raw.toUpperCase());
  const bad = codes.find((c) => !COUNTRY.test(c));
  if (bad !== undefined) return { problem: `${JSON.stringify(bad)} is not an ISO 3166 country code such as SA` };
  return { value: new Set(codes) };
}

/** `SA=20000,*=200`: codes per UTC day per country, `*` for every other; `none`: no limit. */
export function parseCountryLimits(raw: string): Parsed<CountryLimits | null> {
  if (/^\s*none\s*$/i.test(raw)) return { value: null };
  const byCountry = new Map<string, number>();
  let other: number | null = null;
  for (const item of items(raw.toUpperCase())) {
    const m = /^([A-Z]{2}|\*)\s*=\s*(\d{1,10})$/.exec(item);
    if (m === null)
      return { problem: `${JSON.stringify(item)}: expected COUNTRY=N pairs such as SA=20000,*=200, or none` };
    if (m[1] === '*') other = Number(m[2]);
    else byCountry.set(m[1]!, Number(m[2]));
  }
  return { value: { byCountry, other } };
}
