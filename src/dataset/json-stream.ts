/**
 * Reads a JSON dataset as a stream: the top-level object and its arrays walked token by token,
 * each element (one record) parsed whole by json-text.ts. Memory holds one chunk and one record;
 * problems carry the file's line (and column for syntax), as the in-memory parser reports them.
 */
import type { ImportItem } from '../store/import/import-items.js';
import { JsonSyntaxError, parseJsonValue } from './json-text.js';
import type { DuplicateMember } from './json-text.js';
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
import { describeToken, END_SLACK, kindOfStart, MAX_VALUE_CHARS, WS } from './json-walk.js';
import type { State } from './json-walk.js';

export { MAX_VALUE_CHARS };
import { LineCounter } from './line-counter.js';

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
