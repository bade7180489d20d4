/**
 * A strict JSON (RFC 8259) parser for dataset files. JSON.parse is not enough here: its messages do
 * not always give a position, and it silently keeps the last of two members with the same name.
 * This one reports `line L column C: ...` and lists duplicate member names instead of hiding them.
 */
import { codePointName } from '../store/import/record-check.js';

export class JsonSyntaxError extends Error {
  constructor(
    readonly line: number,
    readonly column: number,
    readonly detail: string,
    /** Where in the text, for callers that place a piece of text in a larger file. */
    readonly offset: number = 0,
    /** The text ended before the value did: more text might make it valid (a streamed file). */
    readonly incomplete: boolean = false,
  ) {
    super(`line ${line} column ${column}: ${detail}`);
    this.name = 'JsonSyntaxError';
  }
}

export interface DuplicateMember {
  readonly name: string;
  /** Offset of the repeated name's opening quote, for `TextPosition.describe`. */
  readonly offset: number;
}

export interface JsonParseResult {
  readonly value: unknown;
  readonly duplicateMembers: readonly DuplicateMember[];
}

/** Far above any dataset's depth (3); stops hostile nesting before the call stack overflows. */
const MAX_DEPTH = 256;

const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
const ESCAPES: Readonly<Record<string, string>> = {
  '"': '"',
  '\\': '\\',
  '/': '/',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
};

/** Turns offsets into 1-based line and column (columns count code points, as editors do). */
export class TextPosition {
  #lineStarts: number[] | null = null;
  constructor(private readonly text: string) {}

  locate(offset: number): { line: number; column: number } {
    const starts = (this.#lineStarts ??= lineStarts(this.text));
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    const start = starts[lo]!;
    return { line: lo + 1, column: [...this.text.slice(start, offset)].length + 1 };
  }

  describe(offset: number): string {
    const { line, column } = this.locate(offset);
    return `line ${line} column ${column}`;
  }
}

function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) starts.push(i + 1);
  return starts;
}

export function parseJsonText(text: string): JsonParseResult {
  return new Parser(text).parseDocument();
}

/**
 * Parses the one value that starts at `start` (no white space before it) and says where it ends,
 * for readers that walk a large document value by value. Offsets are into `text`.
 */
export function parseJsonValue(text: string, start: number): JsonParseResult & { readonly end: number } {
  return new Parser(text, start).parseOne();
}

class Parser {
  private i = 0;
  private depth = 0;
  private readonly duplicates: DuplicateMember[] = [];
  private readonly position: TextPosition;

  constructor(
    private readonly text: string,
    start = 0,
  ) {
    this.position = new TextPosition(text);
    this.i = start;
  }

  parseOne(): JsonParseResult & { readonly end: number } {
    const value = this.parseValue();
    return { value, end: this.i, duplicateMembers: this.duplicates };
  }

  parseDocument(): JsonParseResult {
    this.skipSpace();
    const value = this.parseValue();
    this.skipSpace();
    if (this.i < this.text.length) this.fail(`Unexpected ${this.describeHere()} after the end of the JSON value`);
    return { value, duplicateMembers: this.duplicates };
  }

  private parseValue(): unknown {
    const c = this.text[this.i];
    switch (c) {
      case '{':
        return this.nested(() => this.parseObject());
      case '[':
        return this.nested(() => this.parseArray());
      case '"':
        return this.parseString();
      case 't':
        return this.literal('true', true);
      case 'f':
        return this.literal('false', false);
      case 'n':
        return this.literal('null', null);
      default:
        if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) return this.parseNumber();
        return this.fail(`Unexpected ${this.describeHere()}, expected a JSON value`);
    }
  }

  private nested<T>(parse: () => T): T {
    if (++this.depth > MAX_DEPTH) this.fail(`nesting deeper than ${MAX_DEPTH} levels`);
    const value = parse();
    this.depth--;
    return value;
  }

  private parseObject(): Record<string, unknown> {
    // A plain object (fast: objects of one shape share a hidden class), but "__proto__" is defined,
    // not assigned: it stays an ordinary (and reportable) member, never the prototype.
    const object: Record<string, unknown> = {};
    this.i++;
    this.skipSpace();
    if (this.text[this.i] === '}') {
      this.i++;
      return object;
    }
    for (;;) {
      if (this.text[this.i] !== '"')
        this.fail(`Unexpected ${this.describeHere()}, expected a member name in double quotes`);
      const nameOffset = this.i;
      const name = this.parseString();
      this.skipSpace();
      if (this.text[this.i] !== ':') this.fail(`Unexpected ${this.describeHere()}, expected ':' after a member name`);
      this.i++;
      this.skipSpace();
      const value = this.parseValue();
      if (Object.hasOwn(object, name)) this.duplicates.push({ name, offset: nameOffset });
      else if (name === '__proto__')
        Object.defineProperty(object, name, { value, enumerable: true, writable: true, configurable: true });
      else object[name] = value;
      this.skipSpace();
      const c = this.text[this.i];
      if (c === '}') {
        this.i++;
        return object;
      }
      if (c !== ',') this.fail(`Unexpected ${this.describeHere()}, expected ',' or '}' after a member value`);
      this.i++;
      this.skipSpace();
    }
  }

  private parseArray(): unknown[] {
    const array: unknown[] = [];
    this.i++;
    this.skipSpace();
    if (this.text[this.i] === ']') {
      this.i++;
      return array;
    }
    for (;;) {
      array.push(this.parseValue());
      this.skipSpace();
      const c = this.text[this.i];
      if (c === ']') {
        this.i++;
        return array;
      }
      if (c !== ',') this.fail(`Unexpected ${this.describeHere()}, expected ',' or ']' after an array element`);
      this.i++;
      this.skipSpace();
    }
  }

  private parseString(): string {
    const text = this.text;
    const start = this.i;
    let i = start + 1;
    let out = '';
    let chunk = i;
    for (;;) {
      const code = text.charCodeAt(i);
      if (code === 0x22) break;
      if (Number.isNaN(code)) this.fail('Unterminated string', start, true);
      if (code < 0x20) {
        this.fail(
          code === 0x0a || code === 0x0d
            ? 'Line break inside a string (unterminated string, or a line break that must be written \\n)'
            : `Control character ${codePointName(code)} inside a string must be escaped as \\u${hex4(code)}`,
          i,
        );
      }
      if (code !== 0x5c) {
        i++;
        continue;
      }
      out += text.slice(chunk, i);
      const e = text[i + 1];
      if (e === 'u') {
        const digits = text.slice(i + 2, i + 6);
        if (!/^[0-9A-Fa-f]{4}$/.test(digits)) {
          const cut = i + 6 > text.length && /^[0-9A-Fa-f]*$/.test(digits);
          this.fail('Invalid \\u escape: expected four hexadecimal digits', i, cut);
        }
        out += String.fromCharCode(parseInt(digits, 16));
        i += 6;
      } else if (e !== undefined && Object.hasOwn(ESCAPES, e)) {
        out += ESCAPES[e];
        i += 2;
      } else {
        if (e === undefined) this.fail('Unterminated string', start, true);
        this.fail(`Invalid escape \\${e} in a string`, i);
      }
      chunk = i;
    }
    this.i = i + 1;
    return out + text.slice(chunk, i);
  }

  private parseNumber(): number {
    NUMBER.lastIndex = this.i;
    const match = NUMBER.exec(this.text);
    if (match === null) return this.fail(`Invalid number`);
    this.i += match[0].length;
    return Number(match[0]);
  }

  private literal<T>(word: string, value: T): T {
    if (!this.text.startsWith(word, this.i)) {
      const rest = this.text.slice(this.i);
      this.fail(
        `Unexpected ${this.describeHere()}, expected a JSON value`,
        this.i,
        rest.length < word.length && word.startsWith(rest),
      );
    }
    this.i += word.length;
    return value;
  }

  private skipSpace(): void {
    const text = this.text;
    let i = this.i;
    for (;;) {
      const c = text.charCodeAt(i);
      if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break;
      i++;
    }
    this.i = i;
  }

  private describeHere(): string {
    if (this.i >= this.text.length) return 'end of input';
    const cp = this.text.codePointAt(this.i)!;
    const shown = cp >= 0x21 && cp <= 0x7e ? `'${String.fromCodePoint(cp)}'` : codePointName(cp);
    // "token" reads like JSON.parse's messages, which people search for.
    return `token ${shown}`;
  }

  private fail(detail: string, offset = this.i, incomplete = offset >= this.text.length): never {
    const { line, column } = this.position.locate(offset);
    throw new JsonSyntaxError(line, column, detail, offset, incomplete);
  }
}

function hex4(code: number): string {
  return code.toString(16).padStart(4, '0');
}
