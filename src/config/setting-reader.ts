/**
 * Reads settings by name from the environment (merged with SIS_CONFIG_FILE), taking each default
 * from the settings table, so the table is the one place a default is written: an unset or
 * empty variable reads as the table's default, parsed by the same rule as a value would be.
 * Every wrong value adds one problem naming the setting; reading goes on, so an operator sees
 * them all at once.
 */
import type { Parsed } from './parse-settings.js';
import { SETTINGS } from './settings.js';

export type Env = Readonly<Record<string, string | undefined>>;

const DEFAULTS: ReadonlyMap<string, string> = new Map(SETTINGS.map((s) => [s.name, s.default]));

export class SettingReader {
  readonly problems: string[];

  constructor(
    private readonly env: Env,
    problems: readonly string[] = [],
  ) {
    this.problems = [...problems];
  }

  /** The raw text: the variable's, or the table's default when unset or empty ("" = no default). */
  raw(name: string): string {
    const v = this.env[name];
    if (v !== undefined && v !== '') return v;
    const fallback = DEFAULTS.get(name);
    if (fallback === undefined) throw new Error(`${name} is not in the settings table (src/config/settings.ts)`);
    return fallback;
  }

  /** True when the operator set the variable (to something other than ""). */
  isSet(name: string): boolean {
    const v = this.env[name];
    return v !== undefined && v !== '';
  }

  str(name: string): string {
    return this.raw(name);
  }

  int(name: string, min: number, max: number): number {
    return this.intOrNull(name, min, max) ?? min;
  }

  /** A whole number, or null when neither the variable nor the table gives one. */
  intOrNull(name: string, min: number, max: number): number | null {
    const raw = this.raw(name);
    if (raw === '') return null;
    const n = Number(raw);
    if (!/^\d+$/.test(raw.trim()) || !Number.isSafeInteger(n) || n < min || n > max) {
      this.problems.push(`${name}=${JSON.stringify(raw)}: expected a whole number from ${min} to ${max}`);
      return this.fallbackInt(name);
    }
    return n;
  }

  bool(name: string): boolean {
    const raw = this.raw(name);
    if (/^(1|true|yes|on)$/i.test(raw)) return true;
    if (/^(0|false|no|off)$/i.test(raw)) return false;
    this.problems.push(`${name}=${JSON.stringify(raw)}: expected true or false`);
    return /^(1|true|yes|on)$/i.test(DEFAULTS.get(name) ?? '');
  }

  oneOf<T extends string>(name: string, allowed: readonly T[]): T {
    const raw = this.raw(name).toLowerCase();
    const found = allowed.find((a) => a === raw);
    if (found !== undefined) return found;
    this.problems.push(`${name}=${JSON.stringify(this.raw(name))}: expected one of ${allowed.join(', ')}`);
    return allowed.find((a) => a === DEFAULTS.get(name)) ?? allowed[0]!;
  }

  /** An absolute http(s) URL, or null when unset. */
  url(name: string): string | null {
    const raw = this.raw(name);
    if (raw === '') return null;
    try {
      const u = new URL(raw);
      if (u.protocol === 'http:' || u.protocol === 'https:') return raw;
    } catch {
      // reported below
    }
    this.problems.push(`${name}=${JSON.stringify(raw)}: expected an absolute http:// or https:// URL`);
    return null;
  }

  /**
   * A value read by its own parser; `fallback` when unset (and the table has no default) or wrong.
   * `secret`: the value is never echoed in the problem (API keys may be pasted in clear).
   */
  parsed<T>(name: string, fallback: T, parse: (raw: string) => Parsed<T>, secret = false): T {
    const raw = this.raw(name);
    if (raw.trim() === '') return fallback;
    const result = parse(raw);
    if ('problem' in result) {
      this.problems.push(secret ? `${name}: ${result.problem}` : `${name}=${JSON.stringify(raw)}: ${result.problem}`);
      return fallback;
    }
    return result.value;
  }

  private fallbackInt(name: string): number | null {
    const d = DEFAULTS.get(name) ?? '';
    return d === '' ? null : Number(d);
  }
}
