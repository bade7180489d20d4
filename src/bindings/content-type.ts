/**
 * Just enough of RFC 9110 media types for ASMX's rules: the base type, lower-cased, and one
 * parameter (charset, or SOAP 1.2's action). Quoted values are unquoted.
 */
export interface MediaType {
  readonly base: string;
  param(name: string): string | undefined;
}

const NONE: MediaType = { base: '', param: () => undefined };

/**
 * A client sends the same Content-Type with every request: the last few parsed are kept (a Map,
 * so a header value is never an object key; bounded, so varied headers cannot grow it).
 */
const recent = new Map<string, MediaType>();
const RECENT_MAX = 64;

/** The last header parsed: a request asks twice (the first guess, then the read), and clients repeat theirs. */
let lastHeader: string | undefined;
let lastMedia: MediaType = NONE;

export function parseMediaType(header: string | undefined): MediaType {
  if (header === undefined) return NONE;
  // Compared before the Map: a header string is new with every request, and the Map hashes it.
  if (header === lastHeader) return lastMedia;
  let media = recent.get(header);
  if (media === undefined) {
    media = parse(header);
    if (recent.size >= RECENT_MAX) recent.delete(recent.keys().next().value!);
    recent.set(header, media);
  }
  lastHeader = header;
  lastMedia = media;
  return media;
}

function parse(header: string): MediaType {
  const parts = header.split(';');
  const base = (parts[0] ?? '').trim().toLowerCase();
  const params: (readonly [string, string])[] = [];
  for (let i = 1; i < parts.length; i++) {
    const p = parts[i]!;
    const eq = p.indexOf('=');
    if (eq < 0) continue;
    const v = p.slice(eq + 1).trim();
    params.push([
      p.slice(0, eq).trim().toLowerCase(),
      v.length >= 2 && v.startsWith('"') && v.endsWith('"') ? v.slice(1, -1) : v,
    ]);
  }
  return {
    base,
    param(name: string) {
      // The first parameter of that name wins, as before.
      for (const [n, v] of params) if (n === name) return v;
      return undefined;
    },
  };
}
