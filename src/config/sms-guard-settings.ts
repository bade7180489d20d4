/**
 * The kinds of AuthCode's SMS protection settings (docs/sms.md): the number rules, the country
 * limits, trusted networks, test numbers, the guard's modes and the receipts'
 * path, each checked so a wrong value stops the start with its name and what is expected.
 */
import { EMBEDDINGS, networkProblem } from '../address/client-network.js';
import type { Embedding } from '../address/client-network.js';
import { normalPhone } from '../operations/auth-code-checks.js';
import { NUMBER_TYPES } from '../sms/number-types.js';
import type { NumberType } from '../sms/number-types.js';
import { BRAKE_LAYERS, GUARD_LAYERS } from '../sms/refusal.js';
import type { RefusalReason } from '../sms/refusal.js';
import type { CountryLimits } from '../sms/sms-rules.js';
import { splitList } from './parse-settings.js';
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

/** `invalid` and number types, comma-separated; `none`: nothing refused. */
export function parseRefuseTypes(raw: string): Parsed<{ invalid: boolean; types: ReadonlySet<NumberType> }> {
  if (/^\s*none\s*$/i.test(raw)) return { value: { invalid: false, types: new Set() } };
  const types = new Set<NumberType>();
  let invalid = false;
  for (const item of splitList(raw.toLowerCase())) {
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
  const codes = splitList(raw.toUpperCase());
  const bad = codes.find((c) => !COUNTRY.test(c));
  if (bad !== undefined) return { problem: `${JSON.stringify(bad)} is not an ISO 3166 country code such as SA` };
  return { value: new Set(codes) };
}

/**
 * `home=20000,*=200`: codes per UTC day per country: `home` for SIS_SMS_DEFAULT_REGION's country
 * (withHomeCountry puts it in), an ISO code for that country, `*` for every other; `none`: no limit.
 */
export function parseCountryLimits(raw: string): Parsed<CountryLimits | null> {
  if (/^\s*none\s*$/i.test(raw)) return { value: null };
  const byCountry = new Map<string, number>();
  let other: number | null = null;
  let home: number | null = null;
  for (const item of splitList(raw.toUpperCase())) {
    const m = /^([A-Z]{2}|\*|HOME)\s*=\s*(\d{1,10})$/.exec(item);
    if (m === null)
      return {
        problem: `${JSON.stringify(item)}: expected COUNTRY=N pairs such as home=20000,SA=20000,*=200 (home: SIS_SMS_DEFAULT_REGION's country), or none`,
      };
    if (m[1] === '*') other = Number(m[2]);
    else if (m[1] === 'HOME') home = Number(m[2]);
    else byCountry.set(m[1]!, Number(m[2]));
  }
  return { value: { byCountry, other, home } };
}

/** The limits with `home` given to the region's country (a limit named for that country itself wins). */
export function withHomeCountry(limits: CountryLimits | null, region: string | null): CountryLimits | null {
  if (limits === null || limits.home === null || region === null || limits.byCountry.has(region)) return limits;
  return { ...limits, byCountry: new Map([...limits.byCountry, [region, limits.home]]) };
}

/** Addresses and CIDR ranges, comma-separated. */
export function parseNetworks(raw: string): Parsed<readonly string[]> {
  const entries = splitList(raw);
  for (const entry of entries) {
    const problem = networkProblem(entry);
    if (problem !== null) return { problem: `${problem}; expected addresses and CIDR ranges such as 192.0.2.0/24` };
  }
  return { value: entries };
}

/**
 * SIS_SMS_TRUSTED_EMBEDDED: the embeddings (6to4, nat64, …) by which an IPv6 address is trusted
 * as the listed IPv4 address it carries, comma-separated; `mapped` is always, and may be named.
 */
export function parseEmbeddings(raw: string): Parsed<ReadonlySet<Embedding>> {
  const names = splitList(raw).map((n) => n.toLowerCase());
  const unknown = names.filter((n) => !(EMBEDDINGS as readonly string[]).includes(n));
  if (unknown.length > 0)
    return { problem: `unknown ${unknown.join(', ')}; expected some of ${EMBEDDINGS.join(', ')}` };
  return { value: new Set((names as Embedding[]).filter((n) => n !== 'mapped')) };
}

/** Phones as AuthCode reads them (`+` and digits; spaces and dashes ignored), comma-separated. */
export function parseTestNumbers(raw: string): Parsed<ReadonlySet<string>> {
  const numbers = new Set<string>();
  for (const entry of splitList(raw)) {
    const phone = normalPhone(entry);
    if (phone === null)
      return { problem: `${JSON.stringify(entry)}: expected phones with their country code, such as +966500000001` };
    numbers.add(phone);
  }
  return { value: numbers };
}

/**
 * `enforce` or `monitor` first, then `layer=enforce|monitor` for one (`enforce,address=monitor`):
 * the set of reasons only watched. A bare `monitor` watches every layer but the operator's brakes
 * (BRAKE_LAYERS: number, blocked-range, budget), which only a `layer=monitor` of their own watches.
 */
export function parseGuardModes(raw: string): Parsed<ReadonlySet<RefusalReason>> {
  const monitored = new Set<RefusalReason>();
  const layers = [...GUARD_LAYERS.keys()];
  for (const [i, item] of splitList(raw.toLowerCase()).entries()) {
    const m = /^(?:([a-z-]+)\s*=\s*)?(enforce|monitor)$/.exec(item);
    const everyLayer = [...GUARD_LAYERS].filter(([layer]) => m?.[2] === 'enforce' || !BRAKE_LAYERS.includes(layer));
    const reasons =
      m?.[1] === undefined ? (i === 0 ? everyLayer.flatMap(([, r]) => r) : undefined) : GUARD_LAYERS.get(m[1]);
    if (m === null || reasons === undefined)
      return {
        problem: `${JSON.stringify(item)}: expected enforce or monitor, then layer=enforce|monitor pairs (layers: ${layers.join(', ')})`,
      };
    for (const reason of reasons) {
      if (m[2] === 'monitor') monitored.add(reason);
      else monitored.delete(reason);
    }
  }
  return { value: monitored };
}

/** The path delivery receipts are posted to: a path of its own (not an ops endpoint, not an .asmx); null when unset. */
export const receiptPath: Kind<string | null> = {
  parse: (raw) => {
    const path = raw.trim();
    if (!/^\/[A-Za-z0-9._~/-]+$/.test(path))
      return { problem: 'expected a path such as /sms/receipts (letters, digits and . _ ~ - /)' };
    if (/^\/(healthz|readyz|metrics)$|\.asmx/i.test(path))
      return { problem: "expected a path of its own, not an ops endpoint or a service's .asmx path" };
    return { value: path };
  },
  unset: null,
};
