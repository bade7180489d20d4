/**
 * SIS_CONFIG_FILE: settings from a JSON object or a .env-style file, under the environment
 * (a variable set in the environment wins). Unknown names are reported, since a typo in a file
 * would otherwise silently leave a default in force.
 */
import { readFileSync } from 'node:fs';
import { SETTING_NAMES } from './settings.js';

type Env = Readonly<Record<string, string | undefined>>;

export interface MergedEnv {
  readonly env: Env;
  readonly problems: readonly string[];
}

export function mergeConfigFile(env: Env): MergedEnv {
  const path = env['SIS_CONFIG_FILE'];
  if (path === undefined || path === '') return { env, problems: [] };
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'is a directory' : (code ?? 'cannot read');
    return { env, problems: [`SIS_CONFIG_FILE=${JSON.stringify(path)}: ${why}`] };
  }
  const problems: string[] = [];
  const values = /^\s*\{/.test(text) ? parseJson(text, path, problems) : parseDotEnv(text, path, problems);
  const merged: Record<string, string | undefined> = {};
  for (const [name, value] of values) {
    if (name === 'SIS_CONFIG_FILE') problems.push(`${path}: SIS_CONFIG_FILE cannot be set in the file itself`);
    else if (!SETTING_NAMES.has(name)) problems.push(`${path}: unknown setting ${name}`);
    else merged[name] = value;
  }
  for (const [name, value] of Object.entries(env)) if (value !== undefined && value !== '') merged[name] = value;
  return { env: merged, problems };
}

function parseJson(text: string, path: string, problems: string[]): Map<string, string> {
  const values = new Map<string, string>();
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    problems.push(`${path}: not valid JSON (${(error as Error).message})`);
    return values;
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    problems.push(`${path}: expected a JSON object of settings`);
    return values;
  }
  for (const [name, value] of Object.entries(data)) {
    if (typeof value === 'string') values.set(name, value);
    else if (typeof value === 'number' || typeof value === 'boolean') values.set(name, String(value));
    else if (Array.isArray(value) && value.every((v) => typeof v === 'string')) values.set(name, value.join(','));
    else problems.push(`${path}: ${name}: expected a string, number, boolean or list of strings`);
  }
  return values;
}

/** `NAME=value` lines; `#` comments, optional `export`, single or double quotes. */
function parseDotEnv(text: string, path: string, problems: string[]): Map<string, string> {
  const values = new Map<string, string>();
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  lines.forEach((raw, index) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const m = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/.exec(line);
    if (m === null) {
      problems.push(`${path}:${index + 1}: expected NAME=value`);
      return;
    }
    let value = m[2]!;
    const quote = value[0];
    if ((quote === '"' || quote === "'") && value.length >= 2 && value.endsWith(quote)) {
      value = value.slice(1, -1);
      if (quote === '"') value = value.replace(/\\n/g, '\n').replace(/\\(["\\])/g, '$1');
    } else {
      value = value.replace(/\s+#.*$/, '');
    }
    values.set(m[1]!, value);
  });
  return values;
}
