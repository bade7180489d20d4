/**
 * The SMS gateways' settings (docs/sms.md, Gateways): which gateways and in what order
 * (SIS_SMS_GATEWAY), the message's template and sender id, each provider's credentials and URL,
 * and the rules between them: a gateway named needs its credentials, each problem one line.
 * Neither a password nor a token is ever echoed.
 */
import type { Kind, Parsed } from './parse-settings.js';
import { isHttpUrl, splitList } from './parse-settings.js';
import type { SettingReader } from './setting-reader.js';

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

/**
 * Reads the gateways' settings and checks each named gateway's (credentials present, URLs valid);
 * `webhookReady`: the webhook's own settings (read with the outbox) are complete.
 */
export function loadGateways(r: SettingReader, webhookReady: boolean, timeoutMs: number): SmsGatewaySettings {
  const named = r.read('SIS_SMS_GATEWAY');
  const need = (name: GatewayName, settings: readonly [string, string][]): boolean => {
    if (!named.includes(name)) return false;
    const missing = settings.filter(([, v]) => v === '').map(([n]) => n);
    for (const n of missing) r.problems.push(`${n}: required when SIS_SMS_GATEWAY names ${name}`);
    return missing.length === 0;
  };
  const url = (name: string, value: string): boolean => {
    if (isHttpUrl(value)) return true;
    r.problems.push(`${name}: expected an absolute http:// or https:// URL`);
    return false;
  };
  // Every setting read, named or not (the settings test holds that the config reads each one).
  const k = {
    url: r.read('SIS_SMS_KANNEL_URL'),
    user: r.read('SIS_SMS_KANNEL_USER'),
    password: r.read('SIS_SMS_KANNEL_PASSWORD'),
    smsc: r.read('SIS_SMS_KANNEL_SMSC') || null,
  };
  const p = {
    url: r.read('SIS_SMS_SMPP_URL') ?? '',
    systemId: r.read('SIS_SMS_SMPP_SYSTEM_ID'),
    password: r.read('SIS_SMS_SMPP_PASSWORD'),
    bind: r.read('SIS_SMS_SMPP_BIND'),
    window: r.read('SIS_SMS_SMPP_WINDOW'),
  };
  const t = {
    accountSid: r.read('SIS_SMS_TWILIO_ACCOUNT_SID'),
    authToken: r.read('SIS_SMS_TWILIO_AUTH_TOKEN'),
    apiUrl: r.read('SIS_SMS_TWILIO_API_URL') ?? 'https://api.twilio.com',
  };
  const v = {
    apiKey: r.read('SIS_SMS_VONAGE_API_KEY'),
    apiSecret: r.read('SIS_SMS_VONAGE_API_SECRET'),
    signatureSecret: r.read('SIS_SMS_VONAGE_SIGNATURE_SECRET') || null,
    signatureMethod: r.read('SIS_SMS_VONAGE_SIGNATURE_METHOD'),
    apiUrl: r.read('SIS_SMS_VONAGE_API_URL') ?? 'https://rest.nexmo.com',
  };
  const u = {
    appSid: r.read('SIS_SMS_UNIFONIC_APP_SID'),
    webhookToken: r.read('SIS_SMS_UNIFONIC_WEBHOOK_TOKEN') || null,
    apiUrl: r.read('SIS_SMS_UNIFONIC_API_URL') ?? 'https://el.cloud.unifonic.com',
  };
  const kannel =
    need('kannel', [
      ['SIS_SMS_KANNEL_URL', k.url],
      ['SIS_SMS_KANNEL_USER', k.user],
      ['SIS_SMS_KANNEL_PASSWORD', k.password],
    ]) && url('SIS_SMS_KANNEL_URL', k.url)
      ? k
      : null;
  const smpp = need('smpp', [
    ['SIS_SMS_SMPP_URL', p.url],
    ['SIS_SMS_SMPP_SYSTEM_ID', p.systemId],
    ['SIS_SMS_SMPP_PASSWORD', p.password],
  ])
    ? p
    : null;
  const twilio = need('twilio', [
    ['SIS_SMS_TWILIO_ACCOUNT_SID', t.accountSid],
    ['SIS_SMS_TWILIO_AUTH_TOKEN', t.authToken],
  ])
    ? t
    : null;
  const vonage = need('vonage', [
    ['SIS_SMS_VONAGE_API_KEY', v.apiKey],
    ['SIS_SMS_VONAGE_API_SECRET', v.apiSecret],
  ])
    ? v
    : null;
  const unifonic = need('unifonic', [['SIS_SMS_UNIFONIC_APP_SID', u.appSid]]) ? u : null;
  const callbackUrl = r.read('SIS_SMS_CALLBACK_URL');
  const receiptPath = r.read('SIS_SMS_RECEIPT_PATH');
  if (callbackUrl !== null && receiptPath === null)
    r.problems.push(
      'SIS_SMS_CALLBACK_URL: set, but SIS_SMS_RECEIPT_PATH is not; it is that path as providers reach it',
    );
  else if (callbackUrl !== null && receiptPath !== null && !new URL(callbackUrl).pathname.endsWith(receiptPath))
    r.problems.push(
      `SIS_SMS_CALLBACK_URL: expected a URL whose path ends with SIS_SMS_RECEIPT_PATH (${receiptPath}), as providers reach it`,
    );
  const ready = { webhook: webhookReady, kannel, smpp, twilio, vonage, unifonic };
  // The webhook left without its URL is today's "no gateway": messages wait. A fallback needs every one.
  const names = named.length === 1 && named[0] === 'webhook' && !webhookReady ? [] : named;
  if (named.length > 1 && named.includes('webhook') && !webhookReady)
    r.problems.push('SIS_SMS_WEBHOOK_URL: required when SIS_SMS_GATEWAY names webhook beside other gateways');
  return {
    names: names.filter((n) => ready[n] !== null && ready[n] !== false),
    template: readTemplate(r),
    senderId: r.read('SIS_SMS_SENDER_ID'),
    timeoutMs,
    callbackUrl: callbackUrl === null ? null : callbackUrl.replace(/\/+$/, ''),
    receiptPath,
    kannel,
    smpp,
    twilio,
    vonage,
    unifonic,
  };
}

/** SIS_SMS_TEMPLATE, or its former name SIS_SMS_MESSAGE when only that is set. */
function readTemplate(r: SettingReader): string {
  const former = r.read('SIS_SMS_MESSAGE');
  const template = r.read('SIS_SMS_TEMPLATE');
  if (former === null) return template;
  if (template !== DEFAULT_TEMPLATE)
    r.problems.push('SIS_SMS_MESSAGE: the former name of SIS_SMS_TEMPLATE; set only SIS_SMS_TEMPLATE');
  return former;
}
