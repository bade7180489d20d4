/**
 * The SMS gateways' settings (docs/sms.md, Gateways): which gateways and in what order
 * (SIS_SMS_GATEWAY), the message's template and sender id, each provider's credentials and URL,
 * as the settings table's kinds and the section's types; the section itself, with the rules between
 * them (a gateway named needs its credentials, each problem one line), is loadGateways in
 * config-sections.ts, beside the other sections (the table imports this file: no loop back).
 * Neither a password nor a token is ever echoed.
 */
import type { Kind, Parsed } from './parse-settings.js';
import { splitList } from './parse-settings.js';

/** SIS_SMS_GATEWAY's names, in the order of docs/sms.md. */
export const GATEWAY_NAMES = ['webhook', 'kannel', 'smpp', 'twilio', 'vonage', 'unifonic'] as const;
export type GatewayName = (typeof GATEWAY_NAMES)[number];

/** The gateways in the order they are tried: each at most once. */
export function parseGateways(raw: string): Parsed<readonly GatewayName[]> {
  const names: GatewayName[] = [];
  for (const item of splitList(raw.toLowerCase())) {
    const name = GATEWAY_NAMES.find((n) => n === item);
    if (name === undefined) return { problem: `${JSON.stringify(item)}: expected ${GATEWAY_NAMES.join(', ')}` };
    if (names.includes(name)) return { problem: `${name} named twice: each gateway is tried once` };
    names.push(name);
  }
  if (names.length === 0) return { problem: `expected one or more of ${GATEWAY_NAMES.join(', ')}` };
  return { value: names };
}

/** SIS_SMS_TEMPLATE's default: short, so that with a 6-digit code it fits one segment in any alphabet. */
export const DEFAULT_TEMPLATE = 'Your code is {code}';

/** The placeholders a template may hold. */
const PLACEHOLDERS = ['code'];

/** The SMS text: `{code}` at least once, no other placeholder (a typo such as `{cod}` would reach parents). */
export function parseTemplate(raw: string): Parsed<string> {
  const unknown = [...raw.matchAll(/\{([^{}]*)\}/g)].find((m) => !PLACEHOLDERS.includes(m[1]!));
  if (unknown !== undefined)
    return { problem: `${unknown[0]} is not a placeholder: expected {code} where the code goes, and no other` };
  if (!raw.includes('{code}')) return { problem: 'expected a text with {code} where the code goes' };
  return { value: raw };
}

/** An alphanumeric sender (at most 11 letters, digits, spaces, . - &) or a number (3 to 15 digits, + allowed). */
export const senderId: Kind<string | null> = {
  parse: (raw) =>
    /^(?=.*[A-Za-z])[A-Za-z0-9 .&-]{1,11}$/.test(raw) || /^\+?\d{3,15}$/.test(raw)
      ? { value: raw }
      : { problem: 'expected an alphanumeric sender id of at most 11 characters, or a phone number' },
  unset: null,
};

/** smpp://host:port or ssmpp://host:port (TLS). */
export const smppUrl: Kind<string | null> = {
  parse: (raw) => {
    try {
      const u = new URL(raw);
      if ((u.protocol === 'smpp:' || u.protocol === 'ssmpp:') && u.hostname !== '' && u.pathname.length <= 1)
        return { value: raw };
    } catch {
      // not a URL: the problem below
    }
    return { problem: 'expected smpp://host:port or ssmpp://host:port' };
  },
  unset: null,
};

export interface KannelSettings {
  /** smsbox's sendsms URL (http://host:13013/cgi-bin/sendsms). */
  readonly url: string;
  readonly user: string;
  readonly password: string;
  /** The smsc-id to route through; null: Kannel's routing decides. */
  readonly smsc: string | null;
}

export interface SmppSettings {
  readonly url: string;
  readonly systemId: string;
  readonly password: string;
  readonly bind: 'transceiver' | 'transmitter';
  /** submit_sm PDUs sent and not yet answered, at most. */
  readonly window: number;
}

export interface TwilioSettings {
  readonly accountSid: string;
  readonly authToken: string;
  readonly apiUrl: string;
}

export interface VonageSettings {
  readonly apiKey: string;
  readonly apiSecret: string;
  /** Checks the delivery receipts' `sig`; null: receipts from Vonage are refused. */
  readonly signatureSecret: string | null;
  readonly signatureMethod: 'md5hash' | 'md5' | 'sha1' | 'sha256' | 'sha512';
  readonly apiUrl: string;
}

export interface UnifonicSettings {
  readonly appSid: string;
  /** The token the DLR webhook's URL carries (`?token=`); null: receipts from Unifonic are refused. */
  readonly webhookToken: string | null;
  readonly apiUrl: string;
}

/** How AuthCode's messages leave: the gateways in order, the message, and each named gateway's settings. */
export interface SmsGatewaySettings {
  /** Tried in this order (a fallback when more than one); empty: messages wait in the outbox. */
  readonly names: readonly GatewayName[];
  readonly template: string;
  readonly senderId: string | null;
  /** Longest wait for a gateway's answer per attempt. */
  readonly timeoutMs: number;
  /** The public URL of SIS_SMS_RECEIPT_PATH as providers reach it; null: providers are asked for no delivery reports. */
  readonly callbackUrl: string | null;
  /** SIS_SMS_RECEIPT_PATH: providers' reports come to `<it>/<gateway>`; null: none (SMPP's still come over its bind). */
  readonly receiptPath: string | null;
  readonly kannel: KannelSettings | null;
  readonly smpp: SmppSettings | null;
  readonly twilio: TwilioSettings | null;
  readonly vonage: VonageSettings | null;
  readonly unifonic: UnifonicSettings | null;
}
