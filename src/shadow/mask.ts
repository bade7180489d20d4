/**
 * What a kept difference may hold: credentials never (their headers are dropped), and AuthCode's
 * phone and code masked as `sis outbox` shows them (the phone's last two digits, the code as ***),
 * in the request's path, its body and both answers, whatever the binding spelled them in.
 */
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

const MASKS: readonly (readonly [string, (value: string) => string])[] = [
  ['phone', (v) => maskPhone(v)],
  ['code', () => '***'],
];

/** AuthCode's personal data masked: XML elements `phone`/`code` (any prefix) and form or query fields. */
export function maskAuthCode(text: string): string {
  let out = text;
  for (const [name, mask] of MASKS) {
    // <phone>…</phone>, <p:phone xmlns:p="…">…</p:phone>
    out = out.replace(
      new RegExp(`(<(?:[\\w.-]+:)?${name}\\b[^>]*>)([^<]*)(</(?:[\\w.-]+:)?${name}\\s*>)`, 'g'),
      (_m, open: string, value: string, close: string) => `${open}${mask(value)}${close}`,
    );
    // phone=…& in a query string or form
    out = out.replace(
      new RegExp(`(^|[?&])(${name}=)([^&#\\s]*)`, 'g'),
      (_m, lead: string, key: string, value: string) => {
        let decoded = value;
        try {
          decoded = decodeURIComponent(value.replace(/\+/g, ' '));
        } catch {
          // kept as sent
        }
        return `${lead}${key}${encodeURIComponent(mask(decoded))}`;
      },
    );
  }
  return out;
}
