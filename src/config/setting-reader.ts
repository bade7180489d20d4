/**
 * Reads settings by name from the environment (merged with SIS_CONFIG_FILE), each parsed by its
 * entry in the settings table: an unset or empty variable reads as the entry's default, by the same
 * rule as a value would. Only names of the table are accepted (a typo does not compile). Every
 * wrong value adds one problem naming the setting; reading goes on, so an operator sees them all
 * at once.
 */
import { SETTINGS } from './settings.js';
import type { SettingEntry, SettingName, SettingValue } from './settings.js';

export type Env = Readonly<Record<string, string | undefined>>;

const BY_NAME: ReadonlyMap<string, SettingEntry> = new Map(SETTINGS.map((s) => [s.name, s]));

export class SettingReader {
  readonly problems: string[];

  constructor(
    private readonly env: Env,
    problems: readonly string[] = [],
  ) {
    this.problems = [...problems];
  }

  /** Whether the operator gave the setting a value (an empty one is not). */
  isSet(name: SettingName): boolean {
    const v = this.env[name];
    return v !== undefined && v !== '';
  }

  /** The setting's value; on a wrong one, a problem and the default's value. */
  read<N extends SettingName>(name: N): SettingValue<N> {
    return this.#read(name) as SettingValue<N>;
  }

  #read(name: string): unknown {
    const setting = BY_NAME.get(name);
    if (setting === undefined) throw new Error(`${name} is not in the settings table (src/config/settings.ts)`);
    const { kind } = setting;
    const v = this.env[name];
    const raw = v !== undefined && v !== '' ? v : setting.default;
    if (raw === '') return kind.unset;
    const result = kind.parse(raw);
    if ('value' in result) return result.value;
    const shown = kind.shown === undefined ? raw : kind.shown(raw);
    this.problems.push(
      shown === null ? `${name}: ${result.problem}` : `${name}=${JSON.stringify(shown)}: ${result.problem}`,
    );
    const fallback = setting.default === '' ? null : kind.parse(setting.default);
    return fallback !== null && 'value' in fallback ? fallback.value : kind.unset;
  }
}
