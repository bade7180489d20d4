/**
 * Access control, off unless configured: a client-address allow-list (403) and API keys (401),
 * each for every service file or for chosen ones. Keys are held as SHA-256 digests only, and a
 * presented key is compared with every digest in constant time.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { BlockList } from 'node:net';
import { listed } from '../address/client-network.js';
import type { Refusal } from '../bindings/types.js';
import type { Config } from '../config/config.js';
import { cidrBlockList } from '../config/parse-settings.js';

const ADDRESS_REFUSED: Refusal = { reason: 'address' };

/** Service names (lower case) a rule applies to; null = every request. */
type Scope = ReadonlySet<string> | null;

export class AccessControl {
  private readonly allow: BlockList | null;
  private readonly allowScope: Scope;
  private readonly keys: readonly Buffer[];
  private readonly keyScope: Scope;
  private readonly unauthorized: Refusal;

  constructor(config: Config) {
    this.keys = config.apiKeys;
    this.keyScope = scope(config.apiKeyServices);
    this.allowScope = scope(config.allowFromServices);
    this.allow = config.allowFrom.length === 0 ? null : cidrBlockList(config.allowFrom);
    this.unauthorized = { reason: 'key', realm: config.authRealm };
  }

  /** True when some rule is configured: otherwise the server skips the check entirely. */
  get enabled(): boolean {
    return this.allow !== null || this.keys.length > 0;
  }

  /** Refused when the allow-list applies to `service` (lower case, or null) and `address` is not on it. */
  checkAddress(service: string | null, address: string): Refusal | null {
    if (this.allow === null || !applies(this.allowScope, service) || this.allowed(address)) return null;
    return ADDRESS_REFUSED;
  }

  /** Refused when keys are required for `service` and the request brings none that matches. */
  checkKey(service: string | null, header: (name: string) => string | undefined): Refusal | null {
    if (this.keys.length === 0 || !applies(this.keyScope, service) || this.validKey(presentedKey(header))) return null;
    return this.unauthorized;
  }

  private allowed(address: string): boolean {
    return listed(this.allow!, address);
  }

  private validKey(key: string | undefined): boolean {
    if (key === undefined || key === '') return false;
    const digest = createHash('sha256').update(key, 'utf8').digest();
    let ok = false;
    // No early exit: the time taken does not tell which stored key came close.
    for (const stored of this.keys) ok = timingSafeEqual(digest, stored) || ok;
    return ok;
  }
}

/** The key from X-Api-Key, or else the password of HTTP Basic credentials (the user name is free). */
export function presentedKey(header: (name: string) => string | undefined): string | undefined {
  const direct = header('x-api-key');
  if (direct !== undefined && direct !== '') return direct.trim();
  const auth = header('authorization');
  const m = auth === undefined ? null : /^\s*Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(auth);
  if (m === null) return undefined;
  const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 0 ? undefined : decoded.slice(colon + 1);
}

/** `sha256:HEX` for a key, the form SIS_API_KEYS holds. */
export function hashKey(key: string): string {
  return `sha256:${createHash('sha256').update(key, 'utf8').digest('hex')}`;
}

function scope(names: readonly string[] | null): Scope {
  return names === null ? null : new Set(names.map((n) => n.toLowerCase()));
}

function applies(scope: Scope, service: string | null): boolean {
  return scope === null || (service !== null && scope.has(service));
}
