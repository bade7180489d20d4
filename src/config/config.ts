/**
 * Configuration from the environment (and SIS_CONFIG_FILE under it), validated once at start.
 * Every wrong value is reported with its name and what is expected, all at once, so an operator
 * fixes them in one go. docs/operations.md lists every setting (src/config/settings.ts).
 */
import type { AuthCodePolicy } from '../operations/context.js';
import type { ResultsMode } from '../operations/index.js';
import { mergeConfigFile } from './config-file.js';
import {
  accessSettings,
  databaseSettings,
  httpSettings,
  loggingSettings,
  retentionSettings,
  shadowSettings,
  smsGuardSettings,
  smsSettings,
} from './config-sections.js';
import type { Config } from './config-types.js';
import type { RateLimit } from './parse-settings.js';
import { SettingReader } from './setting-reader.js';
import type { Env } from './setting-reader.js';
import { SETTINGS } from './settings.js';

export type { Config, OutboxSettings, ShadowSettings, SmsWebhook } from './config-types.js';
export type { RetentionSettings } from './retention-settings.js';
export type { RateLimit, ResultsMode };

export class ConfigError extends Error {
  readonly code = 'ERR_CONFIG';
  constructor(readonly problems: readonly string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/**
 * The whole configuration, read once at start: every setting of src/config/settings.ts (whose
 * table holds each default), in sections; throws ConfigError with every problem found.
 */
export function loadConfig(processEnv: Env = process.env): Config {
  const merged = mergeConfigFile(processEnv);
  const r = new SettingReader(merged.env, merged.problems);
  const smsDelivery = smsSettings(r);
  const access = accessSettings(r);
  const config: Config = {
    ...httpSettings(r),
    ...databaseSettings(r),
    ...loggingSettings(r),
    ...access,
    ...smsDelivery,
    sms: smsGuardSettings(r, access.clientIpv6Prefix, access.clientNat64Prefixes),
    ...retentionSettings(r, smsDelivery.authCodesPerHour),
    ...shadowSettings(r),
    demoData: r.read('SIS_DEMO_DATA'),
    helpTestForm: r.read('SIS_HELP_TEST_FORM'),
    results: r.read('SIS_RESULTS'),
  };
  if (r.problems.length > 0) throw new ConfigError(inTableOrder(r.problems));
  return config;
}

/** Problems in the order of the settings table (the order of the docs), whatever the reading order. */
function inTableOrder(problems: readonly string[]): string[] {
  const rank = (p: string): number => {
    const i = SETTINGS.findIndex((s) => p.startsWith(s.name) && /^[=:/ ]/.test(p.slice(s.name.length)));
    return i < 0 ? -1 : i;
  };
  return problems
    .map((p, i) => ({ p, i, r: rank(p) }))
    .sort((a, b) => a.r - b.r || a.i - b.i)
    .map((x) => x.p);
}

/** AuthCode's per-phone limit and SMS text, as the settings say: the service and the shadow's replay alike. */
export function authCodePolicyOf(config: Config): AuthCodePolicy {
  return {
    maxPerHour: config.authCodesPerHour,
    message: (code: string) => config.smsMessage.split('{code}').join(code),
  };
}
