/**
 * Operation by operation (docs/migrating.md): SIS_SHADOW is a default mode and overrides,
 * comma-separated (`legacy,GetTokenDevice=off,NotificationNotes=compare`), a name being an
 * operation or a service file (with or without `.asmx`). Checked against the contract at start: a
 * name it does not have stops the start, naming the closest it has.
 */
import { listed } from '../address/client-network.js';
import { cidrBlockList } from '../config/parse-settings.js';
import type { ShadowMode, ShadowModeSpec } from '../config/parse-settings.js';
import type { Service } from '../operations/index.js';

export type { ShadowMode, ShadowModeSpec } from '../config/parse-settings.js';

/** The modes of one process: the default, and overrides by service file and by operation. */
export interface ModeTable {
  readonly default: ShadowMode;
  /** By lower-cased service file name (without `.asmx`). */
  readonly services: ReadonlyMap<string, ShadowMode>;
  /** By operation name (case-sensitive, as ASMX). */
  readonly operations: ReadonlyMap<string, ShadowMode>;
}

/** The spec's names found in the contract; throws naming the closest for one it lacks. */
export function modeTable(spec: ShadowModeSpec, services: readonly Service[]): ModeTable {
  const files = new Map(services.map((s) => [s.name.toLowerCase(), s.name]));
  const operations = new Set(services.flatMap((s) => s.operations.map((op) => op.name)));
  const byService = new Map<string, ShadowMode>();
  const byOperation = new Map<string, ShadowMode>();
  for (const [name, mode] of spec.overrides) {
    const file = name.replace(/\.asmx$/i, '').toLowerCase();
    if (files.has(file)) byService.set(file, mode);
    else if (operations.has(name)) byOperation.set(name, mode);
    else {
      const known = [...files.values(), ...operations];
      throw new Error(
        `SIS_SHADOW names ${JSON.stringify(name)}, which is neither an operation nor a service file; did you mean ${closest(name, known)}? (known: ${known.join(', ')})`,
      );
    }
  }
  return { default: spec.default, services: byService, operations: byOperation };
}

/**
 * The mode of a request: its operation's override, else its service file's, else the default.
 * `operation` is null where the request does not name it before its body (SOAP, an unknown path).
 */
export function modeOf(table: ModeTable, service: string | null, operation: string | null): ShadowMode {
  if (operation !== null) {
    const own = table.operations.get(operation);
    if (own !== undefined) return own;
  }
  if (service !== null) {
    const file = table.services.get(service.toLowerCase());
    if (file !== undefined) return file;
  }
  return table.default;
}

/** Whether any request may be beside the legacy service at all. */
export function anyOn(table: ModeTable): boolean {
  return [table.default, ...table.services.values(), ...table.operations.values()].some((m) => m !== 'off');
}

function closest(name: string, known: readonly string[]): string {
  let best = known[0] ?? '';
  let bestDistance = Infinity;
  for (const candidate of known) {
    const d = distance(name.toLowerCase(), candidate.toLowerCase());
    if (d < bestDistance) [best, bestDistance] = [candidate, d];
  }
  return best;
}

/** Levenshtein distance: edits from one name to the other. */
function distance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++)
      next[j] = Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    row = next;
  }
  return row[b.length]!;
}

/** Whether an address is in the blocks (`addr/prefix`, as SIS_SHADOW_ROUTE_FROM is read). */
export function trustedAddresses(blocks: readonly string[]): (address: string) => boolean {
  const list = cidrBlockList(blocks);
  return (address) => listed(list, address);
}
