/**
 * Just enough of RFC 9110 media types for ASMX's rules: the base type, lower-cased, and one
 * parameter (charset, or SOAP 1.2's action). Quoted values are unquoted.
 */
export interface MediaType {
  readonly base: string;
  param(name: string): string | undefined;
}

export function parseMediaType(header: string | undefined): MediaType {
  if (header === undefined) return { base: '', param: () => undefined };
  const parts = header.split(';');
  const base = (parts[0] ?? '').trim().toLowerCase();
  return {
    base,
    param(name: string) {
      for (let i = 1; i < parts.length; i++) {
        const p = parts[i]!;
        const eq = p.indexOf('=');
        if (eq < 0 || p.slice(0, eq).trim().toLowerCase() !== name) continue;
        const v = p.slice(eq + 1).trim();
        return v.length >= 2 && v.startsWith('"') && v.endsWith('"') ? v.slice(1, -1) : v;
      }
      return undefined;
    },
  };
}
