/**
 * SIS_* environment variables that are no setting: a typo (SIS_SHADOW_SAMPEL) would otherwise be
 * ignored without a word and its default used. Each is named with the closest setting of the
 * table (src/config/settings.ts). A warning, not an error: a variable meant for something else
 * (a wrapper script's own SIS_*) must not stop the service. SIS_TEST_* belong to the test suite.
 */
import type { Env } from './setting-reader.js';
import { SETTING_NAMES, SETTINGS } from './settings.js';

export interface UnknownSetting {
  readonly name: string;
  /** The setting whose name is fewest edits away. */
  readonly closest: string;
}

export function unknownSettings(env: Env): UnknownSetting[] {
  const out: UnknownSetting[] = [];
  for (const name of Object.keys(env).sort()) {
    if (!name.startsWith('SIS_') || name.startsWith('SIS_TEST_') || SETTING_NAMES.has(name)) continue;
    out.push({ name, closest: closestSetting(name) });
  }
  return out;
}

/** The warning's text: what was found, what it is probably meant to be, where the list is. */
export function unknownSettingMessage(u: UnknownSetting): string {
  return `${u.name} is not a setting and is ignored; did you mean ${u.closest}? (settings: docs/operations.md)`;
}

function closestSetting(name: string): string {
  let best: string = SETTINGS[0].name;
  let bestDistance = Infinity;
  for (const s of SETTINGS) {
    const d = editDistance(name, s.name);
    if (d < bestDistance) [best, bestDistance] = [s.name, d];
  }
  return best;
}

/**
 * Edits between two names: insertions, deletions, substitutions and swaps of two neighbouring
 * letters (the commonest typo: SAMPEL for SAMPLE) each count one.
 */
export function editDistance(a: string, b: string): number {
  const rows: number[][] = [];
  for (let i = 0; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      if (i === 0) {
        row.push(j);
        continue;
      }
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(rows[i - 1]![j]! + 1, row[j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, rows[i - 2]![j - 2]! + 1);
      row.push(d);
    }
    rows.push(row);
  }
  return rows[a.length]![b.length]!;
}
