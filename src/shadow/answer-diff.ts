/**
 * Compares the legacy service's answer with ours. `identical`: same status, Content-Type,
 * Cache-Control and body bytes. `equivalent`: the same once namespace prefixes, attribute order,
 * whitespace between elements and, in WSDL, disco and help pages, the service's own address are
 * set aside (and HTML error pages compared by status and content type only: ours are not the
 * legacy framework's). Anything else is `different`, with the paths where the answers part.
 */
import type { ShadowPath } from '../store/shadow-types.js';
import { parseTree } from '../xml/xml-tree.js';
import type { Captured } from './capture.js';
import { clip, diffTrees, MAX_PATHS } from './xml-diff.js';
import type { ListPairing } from './xml-diff.js';

export type Comparison =
  | { readonly result: 'identical' | 'equivalent' }
  | { readonly result: 'different'; readonly paths: readonly ShadowPath[] };

export function compareAnswers(legacy: Captured, ours: Captured, metadata: boolean, lists: ListPairing): Comparison {
  if (
    legacy.status === ours.status &&
    legacy.contentType === ours.contentType &&
    legacy.cacheControl === ours.cacheControl &&
    legacy.body.equals(ours.body)
  )
    return { result: 'identical' };
  const paths: ShadowPath[] = [];
  if (legacy.status !== ours.status)
    paths.push({ path: 'status', legacy: String(legacy.status), ours: String(ours.status) });
  if (normalHeader(legacy.contentType) !== normalHeader(ours.contentType))
    paths.push({ path: 'header:Content-Type', legacy: legacy.contentType, ours: ours.contentType });
  if (normalHeader(legacy.cacheControl) !== normalHeader(ours.cacheControl))
    paths.push({ path: 'header:Cache-Control', legacy: legacy.cacheControl, ours: ours.cacheControl });
  if (!isHtmlError(legacy) || !isHtmlError(ours)) paths.push(...bodyPaths(legacy.body, ours.body, metadata, lists));
  if (paths.length === 0) return { result: 'equivalent' };
  return { result: 'different', paths: paths.slice(0, MAX_PATHS) };
}

function bodyPaths(legacyBody: Buffer, ourBody: Buffer, metadata: boolean, lists: ListPairing): ShadowPath[] {
  if (legacyBody.equals(ourBody)) return [];
  const value = metadata ? setAddressAside : undefined;
  const a = text(legacyBody);
  const b = text(ourBody);
  const x = parseTree(a, value === undefined ? {} : { value });
  const y = parseTree(b, value === undefined ? {} : { value });
  if (x !== null && y !== null) return diffTrees(x, y, lists);
  const left = layoutFree(metadata ? setAddressAside(a) : a);
  const right = layoutFree(metadata ? setAddressAside(b) : b);
  if (left === right) return [];
  // Not XML on one side at least: where the texts part, with some context on each side.
  let at = 0;
  while (at < left.length && left[at] === right[at]) at++;
  const from = Math.max(0, at - 80);
  return [{ path: 'body', legacy: clip(left.slice(from, at + 200)), ours: clip(right.slice(from, at + 200)) }];
}

/**
 * A URL or path naming a service file (`http://old-host/School/X.asmx`, `/School/X.asmx`) as the
 * file alone: each service names its own address in WSDL, disco and help pages.
 */
export function setAddressAside(value: string): string {
  return value.replace(/(?:[a-z][a-z0-9+.-]*:\/\/[^\s"'<>/]+)?(?:\/[^\s"'<>?#]*?)?\/([^/\s"'<>?#]+\.asmx)/gi, '$1');
}

function text(body: Buffer): string {
  const s = body.toString('utf8');
  return s.charCodeAt(0) === 0xfeff ? s.slice(1) : s;
}

function layoutFree(s: string): string {
  return s.replace(/\s+/g, ' ').replace(/> </g, '><').trim();
}

function normalHeader(value: string | null): string | null {
  return value === null ? null : value.toLowerCase().replace(/\s+/g, '');
}

function isHtmlError(answer: Captured): boolean {
  return answer.status >= 400 && /^text\/html\b/i.test(answer.contentType ?? '');
}
