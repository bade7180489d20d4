/**
 * Reads a JSON dataset as a stream: the top-level object and its arrays walked token by token,
 * each element (one record) parsed whole by json-text.ts. Memory holds one chunk and one record;
 * problems carry the file's line (and column for syntax), as the in-memory parser reports them.
 * `jsonDatasetSource` hands it to an import record by record.
 */
import type { ImportItem, ImportSource } from '../store/import/import-items.js';
import {
  checkRecord,
  isObject,
  kind,
  member,
  TABLE_NAMES,
  TOP_LEVEL_NAMES,
  TOP_LEVEL_SHAPE,
} from '../store/import/record-check.js';
import type { TableName } from '../store/import/record-check.js';
import { JsonSyntaxError, parseJsonValue } from './json-text.js';
import type { DuplicateMember } from './json-text.js';
import { LineCounter } from './line-counter.js';

// The walk's vocabulary: its states, limits and characters.

/** A record (or any other value read whole) longer than this is refused rather than buffered. */
export const MAX_VALUE_CHARS = 1 << 20;

/** Text after an error near the buffer's end might still change it (a number cut as "1."). */
const END_SLACK = 8;

type State = 'start' | 'member' | 'after-member' | 'first-element' | 'element' | 'after-element' | 'trailing' | 'done';

/** JSON's four white-space characters. */
const WS = (c: number): boolean => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

/** What a value starting with this character would be, for "expected an object, found …". */
function kindOfStart(c: number): string {
  if (c === 0x5b) return 'an array';
  if (c === 0x22) return 'a string';
  if (c === 0x74 || c === 0x66) return 'a boolean';
  if (c === 0x6e) return 'null';
  return 'a number';
}

/** The character at `offset` as a problem shows it: printable ASCII quoted, anything else as U+XXXX. */
function describeToken(buf: string, offset: number): string {
  if (offset >= buf.length) return 'end of input';
  const cp = buf.codePointAt(offset)!;
  const shown =
    cp >= 0x21 && cp <= 0x7e ? `'${String.fromCodePoint(cp)}'` : `U+${cp.toString(16).toUpperCase().padStart(4, '0')}`;
  return `token ${shown}`;
}

/** A value read whole by json-text.ts. */
type Parsed = ReturnType<typeof parseJsonValue>;

export class JsonDatasetReader {
  private buf = '';
  private pos = 0;
  /** Absolute offset (in UTF-16 units) of buf[0]. */
  private bufStart = 0;
  private eof = false;
  private state: State = 'start';
  private firstMember = true;
  /** The array being read: a table's, or null for one that is only checked (an unknown member). */
  private table: TableName | null = null;
  private index = 0;
  private readonly seen = new Set<string>();
  private out: ImportItem[] = [];
  private readonly lines = new LineCounter();

  /** The top-level members read so far. */
  get members(): ReadonlySet<string> {
    return this.seen;
  }

  get finished(): boolean {
    return this.state === 'done';
  }

  push(text: string): void {
    if (this.pos > 0) {
      this.lines.drop(this.buf, this.bufStart, this.pos);
      this.buf = this.buf.slice(this.pos);
      this.bufStart += this.pos;
      this.pos = 0;
    }
    this.buf += text;
  }

  end(): void {
    this.eof = true;
  }

  /** Everything the text pushed so far makes known. */
  drain(): ImportItem[] {
    while (this.state !== 'done' && this.step());
    const items = this.out;
    this.out = [];
    return items;
  }

  /** One step of the walk; false when it needs more text. */
  private step(): boolean {
    if (!this.skipSpace()) return false;
    const c = this.buf.charCodeAt(this.pos);
    const atEnd = this.pos >= this.buf.length;
    switch (this.state) {
      case 'start':
        if (c === 0xfeff) {
          this.pos++;
          return true;
        }
        if (c === 0x7b) {
          this.pos++;
          this.state = 'member';
          return true;
        }
        if (atEnd) return this.fatal(this.pos, 'Unexpected end of input, expected a JSON value');
        if (/["[0-9tfn-]/.test(this.buf[this.pos]!)) {
          return this.stop(`(top level): expected ${TOP_LEVEL_SHAPE}, found ${kindOfStart(c)}`);
        }
        return this.fatal(this.pos, `Unexpected ${this.describe(this.pos)}, expected a JSON value`);
      case 'member':
        if (c === 0x7d && this.firstMember) {
          this.pos++;
          this.state = 'trailing';
          return true;
        }
        if (c !== 0x22)
          return this.fatal(this.pos, `Unexpected ${this.describe(this.pos)}, expected a member name in double quotes`);
        return this.member();
      case 'after-member':
        return this.separator(0x7d, "expected ',' or '}' after a member value", 'member', 'trailing');
      case 'first-element':
        if (c === 0x5d) {
          this.pos++;
          this.state = 'after-member';
        } else {
          this.state = 'element';
        }
        return true;
      case 'element':
        return this.element();
      case 'after-element':
        return this.separator(0x5d, "expected ',' or ']' after an array element", 'element', 'after-member');
      case 'trailing':
        if (atEnd) {
          this.state = 'done';
          return true;
        }
        return this.fatal(this.pos, `Unexpected ${this.describe(this.pos)} after the end of the JSON value`);
      case 'done':
        return false;
    }
  }

  /** A member name, its colon and the first character of its value: read together or not at all. */
  private member(): boolean {
    const start = this.pos;
    const name = this.value(start);
    if (name === undefined) return false;
    if (name === null) return true;
    let i = this.skipFrom(name.end);
    if (i >= this.buf.length) return this.more(start);
    if (this.buf.charCodeAt(i) !== 0x3a)
      return this.fatal(i, `Unexpected ${this.describe(i)}, expected ':' after a member name`);
    i = this.skipFrom(i + 1);
    if (i >= this.buf.length) return this.more(start);
    const key = name.value as string;
    const isArray = this.buf.charCodeAt(i) === 0x5b;
    // Anything but an array is read whole (it is small or it is refused), before any problem is
    // reported: a step that waits for more text is run again from its start.
    let other: Parsed | undefined;
    if (!isArray) {
      const parsed = this.value(i);
      if (parsed === undefined) return this.more(start);
      if (parsed === null) return true;
      other = parsed;
    }
    const known = (TABLE_NAMES as readonly string[]).includes(key);
    const twice = this.seen.has(key);
    if (twice) this.problem(`${this.where(start)}: member ${JSON.stringify(key)} appears twice in one object`);
    else if (!known) this.problem(`${member('', key)}: unknown top-level member; expected ${TOP_LEVEL_NAMES}`);
    this.seen.add(key);
    const table = known && !twice ? (key as TableName) : null;
    if (other !== undefined) {
      if (table === 'push') this.pushSettings(other, i);
      else if (table !== null) this.problem(`${table}: expected an array, found ${kind(other.value)}`);
      this.pos = other.end;
      this.state = 'after-member';
      return true;
    }
    if (table === 'push') this.problem(`push: expected an object with ServerKey and SenderId, found an array`);
    // An array where push belongs is walked only to find its end.
    this.table = table === 'push' ? null : table;
    this.index = 0;
    this.pos = i + 1;
    this.state = 'first-element';
    return true;
  }

  /** The push settings: one object, not an array, so it arrives read whole. */
  private pushSettings(parsed: Parsed, start: number): void {
    const line = this.lines.lineAt(this.buf, this.bufStart, this.bufStart + start);
    this.duplicates(parsed.duplicateMembers);
    if (!isObject(parsed.value)) {
      this.problem(`push: expected an object with ServerKey and SenderId, found ${kind(parsed.value)}`);
      return;
    }
    const record = checkRecord('push', parsed.value, 'push', (message) => this.problem(`line ${line}: ${message()}`));
    if (record !== null) this.out.push({ kind: 'row', table: 'push', ord: 0, line, record });
  }

  private element(): boolean {
    const start = this.pos;
    if (start >= this.buf.length) return this.fatal(start, 'Unexpected end of input, expected a JSON value');
    const parsed = this.value(start);
    if (parsed === undefined) return false;
    if (parsed === null) return true;
    // The delimiter must be here too: "12" at the end of a chunk may be the start of "123".
    if (this.skipFrom(parsed.end) >= this.buf.length && !this.eof) return this.more(start);
    const line = this.lines.lineAt(this.buf, this.bufStart, this.bufStart + start);
    this.duplicates(parsed.duplicateMembers);
    const table = this.table;
    if (table !== null) {
      const label = `${table}[${this.index}]`;
      const record = checkRecord(table, parsed.value, label, (message) => this.problem(`line ${line}: ${message()}`));
      if (record !== null) this.out.push({ kind: 'row', table, ord: this.index, line, record } as ImportItem);
    }
    this.index++;
    this.pos = parsed.end;
    this.state = 'after-element';
    return true;
  }

  /**
   * Parses the value at `start`. Undefined: more text is needed (nothing consumed). Null: a fatal
   * problem was reported.
   */
  private value(start: number): Parsed | undefined | null {
    try {
      return parseJsonValue(this.buf, start);
    } catch (error) {
      if (!(error instanceof JsonSyntaxError)) throw error;
      const cut = error.incomplete || error.offset >= this.buf.length - END_SLACK;
      if (cut && !this.eof) {
        if (this.buf.length - start <= MAX_VALUE_CHARS) return undefined;
        this.fatal(start, `a value longer than ${MAX_VALUE_CHARS} characters; records are far smaller`);
        return null;
      }
      this.fatal(error.offset, error.detail);
      return null;
    }
  }

  /** A ',' (on to `onComma`) or the closing bracket (on to `onClose`); a comma ends the first member. */
  private separator(close: number, expected: string, onComma: State, onClose: State): boolean {
    const c = this.buf.charCodeAt(this.pos);
    if (c !== 0x2c && c !== close) return this.fatal(this.pos, `Unexpected ${this.describe(this.pos)}, ${expected}`);
    this.pos++;
    this.state = c === 0x2c ? onComma : onClose;
    if (c === 0x2c && onComma === 'member') this.firstMember = false;
    return true;
  }

  /** Skips white space; false when the buffer ended in it and more text may follow. */
  private skipSpace(): boolean {
    this.pos = this.skipFrom(this.pos);
    return this.pos < this.buf.length || this.eof;
  }

  private skipFrom(i: number): number {
    const buf = this.buf;
    while (i < buf.length && WS(buf.charCodeAt(i))) i++;
    return i;
  }

  /** Asks for more text, or at the end of the file reports what is missing. */
  private more(start: number): boolean {
    if (!this.eof) {
      this.pos = start;
      return false;
    }
    return this.fatal(this.buf.length, 'Unexpected end of input');
  }

  private duplicates(list: readonly DuplicateMember[]): void {
    for (const d of list)
      this.problem(`${this.where(d.offset)}: member ${JSON.stringify(d.name)} appears twice in one object`);
  }

  private problem(message: string): void {
    this.out.push({ kind: 'problem', message });
  }

  /** A problem after which nothing more can be read. */
  private fatal(offset: number, detail: string): boolean {
    this.problem(`${this.where(offset)}: ${detail}`);
    this.state = 'done';
    return true;
  }

  /** A problem that makes the rest of the file pointless to read. */
  private stop(message: string): boolean {
    this.problem(message);
    this.state = 'done';
    return true;
  }

  private where(offset: number): string {
    const { line, column } = this.lines.locate(this.buf, this.bufStart, this.bufStart + offset);
    return `line ${line} column ${column}`;
  }

  private describe(offset: number): string {
    return describeToken(this.buf, offset);
  }
}

/** A JSON dataset file as an import source, record by record. */
/**
 * `tables` (what --replace empties) is read once the file is: students and devices always, as a
 * dataset is about them; marks and push only when the file has those members, so a file without
 * them leaves the stored marks and push settings alone.
 */
export function jsonDatasetSource(text: AsyncIterable<string>): ImportSource {
  const reader = new JsonDatasetReader();
  return {
    items: readJsonDataset(text, reader),
    get tables() {
      return TABLE_NAMES.filter((t) => t === 'students' || t === 'devices' || reader.members.has(t));
    },
    labelled: true,
  };
}

export async function* readJsonDataset(
  text: AsyncIterable<string>,
  reader = new JsonDatasetReader(),
): AsyncGenerator<ImportItem[]> {
  for await (const chunk of text) {
    reader.push(chunk);
    yield reader.drain();
    if (reader.finished) return;
  }
  reader.end();
  yield reader.drain();
}
