import type { Envelope, ParamText } from './envelope.js';

/**
 * A fast path for the envelopes real clients send: declaration, Envelope, optional whitespace,
 * Body, one operation element whose children are simple text parameters. It reads them in one
 * pass over the string with no events or allocations per character. Anything else (a Header,
 * comments, CDATA, DTDs, attributes on parameters, nested elements, CR characters, characters
 * outside the common ranges, malformed input) returns null, and the caller uses the full saxes
 * reader, which stays the authority: a property test checks both agree wherever this one answers.
 */

const NAME = /[A-Za-z_][A-Za-z0-9._-]*(?::[A-Za-z_][A-Za-z0-9._-]*)?/y;
const ATTR = /([A-Za-z_][A-Za-z0-9._-]*(?::[A-Za-z_][A-Za-z0-9._-]*)?)[ \t\n]*=[ \t\n]*(?:"([^"<&]*)"|'([^'<&]*)')/y;
const DECL =
  /<\?xml[ \t\n]+version[ \t\n]*=[ \t\n]*(["'])1\.0\1(?:[ \t\n]+encoding[ \t\n]*=[ \t\n]*(["'])[A-Za-z][A-Za-z0-9._-]*\2)?(?:[ \t\n]+standalone[ \t\n]*=[ \t\n]*(["'])(?:yes|no)\3)?[ \t\n]*\?>/y;
// Characters the fast path leaves to saxes: CR (line-end normalisation), controls, non-characters
// and surrogates (pairing rules); and `]]>`, which text may not contain, looked for apart: one
// alternation tried at every character measured slower than these two (bench/RESULTS.md).
const UNUSUAL = /[\r\u0000-\u0008\u000B\u000C\u000E-\u001F\uD800-\uDFFF\uFFFE\uFFFF]/g;
const ENTITY = /&(?:(lt|gt|amp|quot|apos)|#([0-9]{1,7})|#x([0-9A-Fa-f]{1,6}));/y;
const NAMED: Readonly<Record<string, string>> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };
const MAX_ATTRS = 32;
const RESERVED_NS = new Set(['http://www.w3.org/XML/1998/namespace', 'http://www.w3.org/2000/xmlns/']);

interface Tag {
  readonly name: string;
  /** Namespace declarations made on this tag: prefix ('' = default) → URI. */
  readonly decls: ReadonlyArray<readonly [string, string]>;
  readonly attrCount: number;
  readonly selfClosing: boolean;
  readonly end: number;
}

type Scope = ReadonlyArray<readonly [string, string]>;

/**
 * Everything before the first parameter: declaration, Envelope, Body and operation start tags.
 * A client sends the same head with every call of an operation, and what reading it yields
 * depends on its characters alone, so the last few heads are kept and a request that starts
 * with one is read from its parameters on.
 */
interface Head {
  readonly text: string;
  readonly envTag: string;
  readonly bodyTag: string;
  readonly opTag: string;
  readonly root: { readonly ns: string; readonly local: string };
  readonly operation: { readonly ns: string; readonly local: string };
  readonly scope: Scope;
}
const heads: Head[] = [];
const MAX_HEADS = 8;
const MAX_HEAD_CHARS = 1024;

export function scanEnvelope(xml: string, paramNamespace: string): Envelope | null {
  for (const head of heads) {
    // slice + === compares the characters in one block; startsWith goes character by character.
    // A kept head was looked at when it was first read: only what follows it is (the head ends
    // with `>`, so no `]]>` can straddle its end).
    if (xml.length > head.text.length && xml.slice(0, head.text.length) === head.text)
      return usual(xml, head.text.length) ? afterHead(xml, head, paramNamespace) : null;
  }
  if (!usual(xml, 0) || xml.charCodeAt(0) === 0xfeff) return null;
  return scanWhole(xml, paramNamespace);
}

/** No character the fast path leaves to saxes, and no `]]>`, from `from` on. */
function usual(xml: string, from: number): boolean {
  UNUSUAL.lastIndex = from;
  return !UNUSUAL.test(xml) && xml.indexOf(']]>', from) < 0;
}

/** Parameters, then the end tags of the operation, Body and Envelope. */
function afterHead(xml: string, head: Head, paramNamespace: string): Envelope | null {
  const params = new Map<string, ParamText>();
  let i = readParams(xml, head.text.length, head.scope, paramNamespace, params);
  if (i < 0) return null;
  i = closeTag(xml, i, head.opTag);
  if (i < 0) return null;
  i = closeTag(xml, skipWs(xml, i), head.bodyTag);
  if (i < 0) return null;
  i = closeTag(xml, skipWs(xml, i), head.envTag);
  if (i < 0 || skipWs(xml, i) !== xml.length) return null;
  return { root: head.root, bodyElement: head.operation, mustUnderstand: null, params, error: null };
}

function remember(head: Head): void {
  if (head.text.length > MAX_HEAD_CHARS) return;
  if (heads.length >= MAX_HEADS) heads.shift();
  // A copy of its own: a slice would keep the whole first request alive, and compares slower.
  heads.push({ ...head, text: Buffer.from(head.text, 'utf8').toString('utf8') });
}

function scanWhole(xml: string, paramNamespace: string): Envelope | null {
  let i = 0;
  DECL.lastIndex = i;
  if (DECL.test(xml)) i = DECL.lastIndex;
  i = skipWs(xml, i);

  const env = readTag(xml, i);
  if (env === null || env.selfClosing) return null;
  const scope1: Scope = env.decls;
  const envName = resolve(env.name, scope1);
  if (envName === null || envName.local !== 'Envelope') return null;

  i = skipWs(xml, env.end);
  const body = readTag(xml, i);
  if (body === null) return null;
  const scope2 = body.decls.length === 0 ? scope1 : [...body.decls, ...scope1];
  const bodyName = resolve(body.name, scope2);
  if (bodyName === null || bodyName.ns !== envName.ns || bodyName.local !== 'Body') return null;

  let bodyElement: Envelope['bodyElement'] = null;
  if (!body.selfClosing) {
    i = skipWs(xml, body.end);
    if (!xml.startsWith('</', i)) {
      const op = readTag(xml, i);
      if (op === null) return null;
      const scope3 = op.decls.length === 0 ? scope2 : [...op.decls, ...scope2];
      const opName = resolve(op.name, scope3);
      if (opName === null) return null;
      bodyElement = opName;
      i = op.end;
      if (!op.selfClosing) {
        const head = {
          text: xml.slice(0, i),
          envTag: env.name,
          bodyTag: body.name,
          opTag: op.name,
          root: envName,
          operation: opName,
          scope: scope3,
        };
        remember(head);
        return afterHead(xml, head, paramNamespace);
      }
      i = skipWs(xml, i);
    }
    i = closeTag(xml, i, body.name);
    if (i < 0) return null;
  } else {
    i = body.end;
  }
  i = closeTag(xml, skipWs(xml, i), env.name);
  if (i < 0 || skipWs(xml, i) !== xml.length) return null;
  return { root: envName, bodyElement, mustUnderstand: null, params: new Map<string, ParamText>(), error: null };
}

/** Reads `<name>text</name>` children until the parent's end tag; -1 when anything else shows. */
function readParams(xml: string, start: number, scope: Scope, ns: string, out: Map<string, ParamText>): number {
  let i = start;
  for (;;) {
    const textEnd = xml.indexOf('<', i);
    if (textEnd < 0 || !isWhitespace(xml, i, textEnd)) return -1;
    i = textEnd;
    if (xml.charCodeAt(i + 1) === 0x2f) return i; // `</`: the parent's end tag
    const tag = readTag(xml, i);
    if (tag === null || tag.attrCount > 0) return -1;
    const name = resolve(tag.name, scope);
    if (name === null) return -1;
    let text = '';
    let after: number;
    if (tag.selfClosing) {
      after = tag.end;
    } else {
      const lt = xml.indexOf('<', tag.end);
      if (lt < 0) return -1;
      const decoded = decodeText(xml, tag.end, lt);
      if (decoded === null) return -1;
      text = decoded;
      after = closeTag(xml, lt, tag.name);
      if (after < 0) return -1;
    }
    if (name.ns === ns && !out.has(name.local)) {
      out.set(name.local, { text, nil: false, complex: false, after: position(xml, after) });
    }
    i = after;
  }
}

/** .NET's line and column of the node after `offset` (the reader stands on its name for tags). */
function position(xml: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lastNl = -1;
  for (let k = xml.indexOf('\n'); k >= 0 && k < offset; k = xml.indexOf('\n', k + 1)) {
    line++;
    lastNl = k;
  }
  let column = offset - lastNl;
  if (xml.charCodeAt(offset) === 0x3c) column += xml.charCodeAt(offset + 1) === 0x2f ? 2 : 1;
  return { line, column };
}

function readTag(xml: string, start: number): Tag | null {
  if (xml.charCodeAt(start) !== 0x3c) return null;
  NAME.lastIndex = start + 1;
  const m = NAME.exec(xml);
  if (m === null) return null;
  const name = m[0];
  let i = NAME.lastIndex;
  const decls: [string, string][] = [];
  const seen: string[] = [];
  for (;;) {
    const ws = skipWs(xml, i);
    const c = xml.charCodeAt(ws);
    if (c === 0x3e) return { name, decls, attrCount: seen.length, selfClosing: false, end: ws + 1 };
    if (c === 0x2f) {
      if (xml.charCodeAt(ws + 1) !== 0x3e) return null;
      return { name, decls, attrCount: seen.length, selfClosing: true, end: ws + 2 };
    }
    if (ws === i) return null; // attributes need white space before them
    ATTR.lastIndex = ws;
    const a = ATTR.exec(xml);
    if (a === null) return null;
    const attr = a[1]!;
    if (seen.includes(attr) || seen.length >= MAX_ATTRS) return null;
    seen.push(attr);
    const value = a[2] ?? a[3] ?? '';
    if (RESERVED_NS.has(value)) return null; // binding rules for these: saxes checks them
    if (attr === 'xmlns') decls.push(['', value]);
    else if (attr.startsWith('xmlns:')) {
      const prefix = attr.slice(6);
      if (value === '' || prefix === 'xml' || prefix === 'xmlns') return null;
      decls.push([prefix, value]);
    } else if (attr.includes(':')) {
      // A prefixed attribute must have a declared prefix: leave the check to saxes.
      return null;
    }
    i = ATTR.lastIndex;
  }
}

function closeTag(xml: string, start: number, name: string): number {
  if (xml.charCodeAt(start) !== 0x3c || xml.charCodeAt(start + 1) !== 0x2f || !sameAt(xml, start + 2, name)) return -1;
  const i = skipWs(xml, start + 2 + name.length);
  return xml.charCodeAt(i) === 0x3e ? i + 1 : -1;
}

/** `xml` holds `name` at `at` (a loop over a short name beats startsWith here). */
function sameAt(xml: string, at: number, name: string): boolean {
  if (at + name.length > xml.length) return false;
  for (let k = 0; k < name.length; k++) if (xml.charCodeAt(at + k) !== name.charCodeAt(k)) return false;
  return true;
}

function resolve(qname: string, scope: Scope): { ns: string; local: string } | null {
  const colon = qname.indexOf(':');
  const prefix = colon < 0 ? '' : qname.slice(0, colon);
  const local = colon < 0 ? qname : qname.slice(colon + 1);
  if (prefix === 'xmlns') return null;
  if (prefix === 'xml') return { ns: 'http://www.w3.org/XML/1998/namespace', local };
  for (const [p, uri] of scope) if (p === prefix) return { ns: uri, local };
  return prefix === '' ? { ns: '', local } : null;
}

function decodeText(xml: string, start: number, end: number): string | null {
  const raw = xml.slice(start, end);
  if (!raw.includes('&')) return raw;
  let out = '';
  let i = 0;
  for (let amp = raw.indexOf('&'); amp >= 0; amp = raw.indexOf('&', i)) {
    out += raw.slice(i, amp);
    ENTITY.lastIndex = amp;
    const m = ENTITY.exec(raw);
    if (m === null) return null;
    if (m[1] !== undefined) out += NAMED[m[1]]!;
    else {
      const cp = m[2] !== undefined ? Number(m[2]) : parseInt(m[3]!, 16);
      // Only plain characters; references to anything unusual go to saxes for its checks.
      if (cp < 0x20 || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0xfffd) return null;
      out += String.fromCharCode(cp);
    }
    i = ENTITY.lastIndex;
  }
  return out + raw.slice(i);
}

function skipWs(xml: string, i: number): number {
  for (;;) {
    const c = xml.charCodeAt(i);
    if (c !== 0x20 && c !== 0x0a && c !== 0x09) return i;
    i++;
  }
}

function isWhitespace(xml: string, start: number, end: number): boolean {
  for (let k = start; k < end; k++) {
    const c = xml.charCodeAt(k);
    if (c !== 0x20 && c !== 0x09 && c !== 0x0a) return false;
  }
  return true;
}
