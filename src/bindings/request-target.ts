/**
 * The request target as ASMX reads it, parsed once per request for everyone who needs it (the
 * access gate, the dispatcher, the log): the base path, then `<ServiceFile>.asmx`, matched
 * case-insensitively (decision 2), then `/<Operation>` for HTTP GET and POST, and the query.
 */
import type { RequestTarget } from './types.js';

/** Null when the target names no `.asmx` file under the base path (or cannot be decoded). */
export function parseTarget(url: string, basePath: string): RequestTarget | null {
  const q = url.indexOf('?');
  const path = decodePath(q < 0 ? url : url.slice(0, q));
  if (path === null || !path.startsWith(basePath)) return null;
  // `<file>.asmx` then, optionally, `/<anything>`: string steps, not a regular expression (per request).
  const slash = path.indexOf('/', basePath.length);
  const file = slash < 0 ? path.slice(basePath.length) : path.slice(basePath.length, slash);
  if (file.length <= ASMX.length || file.slice(-ASMX.length).toLowerCase() !== ASMX) return null;
  return {
    serviceKey: file.slice(0, -ASMX.length).toLowerCase(),
    opPath: slash < 0 ? undefined : path.slice(slash + 1),
    query: q < 0 ? '' : url.slice(q + 1),
  };
}

const ASMX = '.asmx';

/** Decoded only when there is something to decode (most targets have no `%`). */
function decodePath(raw: string): string | null {
  if (!raw.includes('%')) return raw;
  try {
    return decodeURIComponent(raw);
  } catch {
    return null;
  }
}
