/** What loadConfig says is wrong with `env`, line by line (none: it loads). */
import { ConfigError, loadConfig } from '../../src/config/config.js';

export function configProblems(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return [...error.problems];
    throw error;
  }
  return [];
}
