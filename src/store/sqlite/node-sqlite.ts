/**
 * Loads `node:sqlite` once, without the ExperimentalWarning that Node 22 prints when it is first
 * loaded (24.15 and later call it a release candidate and print none): the service's start says
 * nothing an operator must act on. Only that one warning is dropped, only while loading; every
 * other warning is printed as usual. Loaded here, not by a static import, so that no module loads
 * it before the filter is in place.
 */
import type * as NodeSqlite from 'node:sqlite';

let loaded: typeof NodeSqlite | undefined;

export function loadNodeSqlite(): typeof NodeSqlite {
  if (loaded !== undefined) return loaded;
  const emitWarning = process.emitWarning;
  process.emitWarning = function (this: NodeJS.Process, ...args: unknown[]): void {
    if (!isSqliteExperimental(args)) Reflect.apply(emitWarning, this, args);
  } as typeof process.emitWarning;
  try {
    loaded = process.getBuiltinModule('node:sqlite');
  } finally {
    process.emitWarning = emitWarning;
  }
  return loaded;
}

/** `emitWarning('SQLite is an experimental feature…', 'ExperimentalWarning')`, as Node 22 calls it. */
function isSqliteExperimental([warning, type]: unknown[]): boolean {
  const kind = typeof type === 'string' ? type : (type as { type?: unknown } | undefined)?.type;
  const text = warning instanceof Error ? warning.message : String(warning);
  return kind === 'ExperimentalWarning' && text.startsWith('SQLite is an experimental feature');
}
