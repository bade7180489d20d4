/**
 * What a kept difference may hold: credentials never (their headers are dropped), and personal
 * data masked by what the binding read. Every value of a parameter the contract marks personal
 * (`personal` on its definition: AuthCode's `phone` and `code`) is masked wherever it occurs in
 * the request's path and query, its body and both answers, in any spelling a client or a service
 * may give it: raw (CDATA included), percent-encoded, XML-escaped or a mix; a phone keeps its
 * last two digits whatever separates its digits, a secret becomes `***`. When the request could
 * not be read into a call (its values are unknown), fields and elements named like a personal
 * parameter are masked instead, as a last resort.
 */
import type { Operation } from '../operations/index.js';
import { maskPhone } from '../store/phone-mask.js';

const SECRET_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie', 'x-api-key']);

/** The request's headers as kept: name/value pairs, credentials left out. */
export function keptHeaders(rawHeaders: readonly string[]): [string, string][] {
  const out: [string, string][] = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    if (!SECRET_HEADERS.has(rawHeaders[i]!.toLowerCase())) out.push([rawHeaders[i]!, rawHeaders[i + 1]!]);
  }
  return out;
}

type PersonalKind = 'phone' | 'secret';

/**
 * The personal data of one exchange, plain data (it crosses to the comparison thread): the values
 * the binding read for personal parameters, and the names of those parameters (the last resort).
 */
export interface Personal {
  readonly values: readonly { readonly value: string; readonly kind: PersonalKind }[];
  readonly names: readonly { readonly name: string; readonly kind: PersonalKind }[];
}

/**
 * The personal data of a request for `op`, from the arguments its binding read (undefined when it
 * could not be read); null when the operation has no personal parameter, or is not known (then
 * `unknownOp` lists every personal parameter of the service file, masked by name).
 */
export function personalOf(
  op: Operation | null,
  args: Readonly<Record<string, unknown>> | undefined,
  unknownOp: readonly Operation[] = [],
): Personal | null {
  const ops = op === null ? unknownOp : [op];
  const names = ops.flatMap((o) =>
    o.params.flatMap((p) => (p.personal === undefined ? [] : [{ name: p.name, kind: p.personal }])),
  );
  if (names.length === 0) return null;
  const values: { value: string; kind: PersonalKind }[] = [];
  if (args !== undefined)
    for (const { name, kind } of names) {
      const value = args[name];
      if (typeof value === 'string' && value !== '') values.push({ value, kind });
    }
  return { values, names: args === undefined ? names : [] };
}

/** The text with every personal value masked (see the file's comment). */
export function maskPersonal(text: string, personal: Personal): string {
  let out = text;
  // Longest first: a code that is part of a phone must not unmask the phone's digits around it.
  const values = [...personal.values].sort((a, b) => b.value.length - a.value.length);
  for (const { value, kind } of values) {
    const pattern = kind === 'phone' ? phonePattern(value) : spelledPattern(value);
    // A phone's match spells exactly its digits: masked as `sis outbox` shows it, last two kept.
    const masked =
      kind === 'phone' && /\d{3}/.test(value.replace(/\D/g, '')) ? maskPhone(value.replace(/\D/g, '')) : '***';
    if (pattern !== null) out = out.replace(pattern, masked);
  }
  for (const { name, kind } of personal.names) out = maskByName(out, name, kind);
  return out;
}

/** One character in any spelling: itself, percent-encoded (its UTF-8 bytes), an XML reference or entity, `+` for a space. */
function spellings(char: string): string {
  const code = char.codePointAt(0)!;
  const bytes = [...Buffer.from(char, 'utf8')].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('');
  const options = [
    char.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&'),
    bytes.replace(/[0-9a-f]/g, (h) => (/[a-f]/.test(h) ? `[${h}${h.toUpperCase()}]` : h)),
    `&#0*${code};`,
    `&#[xX]0*${code.toString(16).replace(/[a-f]/g, (h) => `[${h}${h.toUpperCase()}]`)};`,
  ];
  const entity = ENTITIES.get(char);
  if (entity !== undefined) options.push(entity);
  if (char === ' ') options.push('\\+');
  return `(?:${options.join('|')})`;
}

const ENTITIES = new Map([
  ['&', '&amp;'],
  ['<', '&lt;'],
  ['>', '&gt;'],
  ['"', '&quot;'],
  ["'", '&apos;'],
]);

/** A value spelled any way, character by character; not inside a longer run of letters and digits. */
function spelledPattern(value: string): RegExp | null {
  const chars = [...value];
  if (chars.length === 0) return null;
  const before = /^[A-Za-z0-9]/.test(value) ? '(?<![A-Za-z0-9])' : '';
  const after = /[A-Za-z0-9]$/.test(value) ? '(?![A-Za-z0-9])' : '';
  return new RegExp(`${before}${chars.map(spellings).join('')}${after}`, 'g');
}

/** What may separate a phone's digits, in any spelling: spaces, dashes, dots, brackets, slashes. */
const SEPARATOR = `(?:${[' ', '-', '.', '(', ')', '/', '\t'].map(spellings).join('|')})*`;

/** A phone's digits in any spelling, whatever separates them; none: the value is masked as a secret. */
function phonePattern(value: string): RegExp | null {
  const digits = value.replace(/\D/g, '');
  if (digits.length < 3) return spelledPattern(value);
  return new RegExp(`(?<![0-9])${[...digits].map(spellings).join(SEPARATOR)}(?![0-9])`, 'g');
}

/** The last resort: `<name>…</name>` (any prefix) and `name=…` fields, whatever their values. */
function maskByName(text: string, name: string, kind: PersonalKind): string {
  const mask = (v: string): string => (kind === 'phone' ? maskPhone(v) : '***');
  const escaped = name.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
  return text
    .replace(
      new RegExp(`(<(?:[\\w.-]+:)?${escaped}\\b[^>]*>)([^<]*)(</(?:[\\w.-]+:)?${escaped}\\s*>)`, 'gi'),
      (_m, open: string, value: string, close: string) => `${open}${mask(value)}${close}`,
    )
    .replace(new RegExp(`(^|[?&])(${escaped}=)([^&#\\s]*)`, 'gi'), (_m, lead: string, key: string, value: string) => {
      let decoded = value;
      try {
        decoded = decodeURIComponent(value.replace(/\+/g, ' '));
      } catch {
        // kept as sent
      }
      return `${lead}${key}${encodeURIComponent(mask(decoded))}`;
    });
}
