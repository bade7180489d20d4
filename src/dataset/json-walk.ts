/** The streamed JSON reader's (json-stream.ts) vocabulary: its states, limits and characters. */

/** A record (or any other value read whole) longer than this is refused rather than buffered. */
export const MAX_VALUE_CHARS = 1 << 20;

/** Text after an error near the buffer's end might still change it (a number cut as "1."). */
export const END_SLACK = 8;

export type State =
  'start' | 'member' | 'after-member' | 'first-element' | 'element' | 'after-element' | 'trailing' | 'done';

/** JSON's four white-space characters. */
export const WS = (c: number): boolean => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

/** What a value starting with this character would be, for "expected an object, found …". */
export function kindOfStart(c: number): string {
  if (c === 0x5b) return 'an array';
  if (c === 0x22) return 'a string';
  if (c === 0x74 || c === 0x66) return 'a boolean';
  if (c === 0x6e) return 'null';
  return 'a number';
}

/** The character at `offset` as a problem shows it: printable ASCII quoted, anything else as U+XXXX. */
export function describeToken(buf: string, offset: number): string {
  if (offset >= buf.length) return 'end of input';
  const cp = buf.codePointAt(offset)!;
  const shown =
    cp >= 0x21 && cp <= 0x7e ? `'${String.fromCodePoint(cp)}'` : `U+${cp.toString(16).toUpperCase().padStart(4, '0')}`;
  return `token ${shown}`;
}
