/**
 * The simple types ASMX's XmlSerializer reads and writes, described once. The result writer,
 * the WSDL schema, the help pages' samples, the bindings' parameter reading and the tests' clients
 * all take what they do with a value from its entry here: a new parameter or result type is one
 * entry (docs/architecture.md, "Adding an operation or a type").
 */
import { AsmxText } from '../errors/asmx-text.js';
import {
  checkDecimal,
  formatDateTime,
  formatDouble,
  parseDecimal,
  parseDouble,
  parseInteger,
  parseXsdDateTime,
  ScalarFormatError,
  trimXml,
} from './scalar-text.js';

export { ScalarFormatError } from './scalar-text.js';

export interface Scalar<V, ValueType extends boolean = boolean> {
  /** The .NET type, as ASMX's conversion errors name it (`System.Int32`). */
  readonly dotNet: string;
  /** The schema type the WSDL names (`s:int`; `s1:` is ASMX's own types namespace). */
  readonly xsd: string;
  /**
   * For a type of ASMX's own namespace (`s1:char`): the XSD type it restricts, which the WSDL
   * defines in a schema of that namespace when an operation uses it.
   */
  readonly restricts?: string;
  /** The root element of an HTTP GET/POST answer (`<int xmlns="…">`) and its WSDL global element. */
  readonly element: string;
  /** What .NET's help pages show in place of a value: the type's schema name. */
  readonly sample: string;
  /** For a type written differently in SOAP and in a form: the help page's one-line note saying how. */
  readonly formNote?: string;
  /**
   * A .NET value type: never null, so always present in SOAP (minOccurs 1), never nillable, and
   * `soapMissing` when a SOAP request leaves it out. A string is the one reference type.
   */
  readonly valueType: ValueType;
  /** What the method receives when a SOAP request leaves the parameter out (.NET's default value). */
  readonly soapMissing: ValueType extends true ? V : null;
  /** XmlConvert.ToString: the text between the tags (escaped by the writer). */
  toXml(value: V): string;
  /**
   * XmlConvert's reading of element text: SOAP arguments, and what a client reads back from an
   * answer. Throws ScalarFormatError with .NET's message.
   */
  fromXml(text: string): V;
  /** Convert.ChangeType(text, type, InvariantCulture): an HTTP GET/POST argument. Throws ScalarFormatError. */
  fromForm(text: string): V;
}

const identity = (s: string): string => s;

const string: Scalar<string, false> = {
  dotNet: 'System.String',
  xsd: 's:string',
  element: 'string',
  sample: 'string',
  valueType: false,
  soapMissing: null,
  toXml: identity,
  fromXml: identity,
  fromForm: identity,
};

/**
 * System.Char: on the SOAP wire an xs:unsignedShort (the UTF-16 code, `49` for '1'), in HTTP
 * GET/POST one literal character. Held as its UTF-16 code.
 */
const char: Scalar<number, true> = {
  dotNet: 'System.Char',
  xsd: 's1:char',
  restricts: 's:unsignedShort',
  element: 'char',
  sample: 'char',
  formNote: "A char is one literal character in HTTP GET and POST, and its numeric UTF-16 code in SOAP (49 for '1').",
  valueType: true,
  soapMissing: 0,
  toXml: (code) => String(code),
  fromXml(text) {
    const value = trimXml(text);
    if (/^[0-9]+$/.test(value)) {
      const n = Number(value);
      if (n <= 0xffff) return n;
      throw new ScalarFormatError(AsmxText.Overflow_UInt16());
    }
    // Decision 8: one non-digit character is taken literally (`Y`), where ASMX faults.
    if (value.length === 1) return value.charCodeAt(0);
    throw new ScalarFormatError(AsmxText.Format_InvalidString());
  },
  fromForm(text) {
    if (text.length !== 1) throw new ScalarFormatError(AsmxText.Format_NeedSingleChar());
    return text.charCodeAt(0);
  },
};

function integer(dotNet: string, overflow: () => string, bits: 32 | 64): Scalar<bigint, true> {
  const max = (1n << BigInt(bits - 1)) - 1n;
  const read = (text: string): bigint => parseInteger(text, -max - 1n, max, overflow);
  return {
    dotNet,
    xsd: `s:${bits === 32 ? 'int' : 'long'}`,
    element: bits === 32 ? 'int' : 'long',
    sample: bits === 32 ? 'int' : 'long',
    valueType: true,
    soapMissing: 0n,
    toXml(value) {
      if (value < -max - 1n || value > max) throw new TypeError(`${value} does not fit in a ${dotNet}.`);
      return String(value);
    },
    fromXml: read,
    fromForm: read,
  };
}

const long = integer('System.Int64', AsmxText.Overflow_Int64, 64);
const int32 = integer('System.Int32', AsmxText.Overflow_Int32, 32);

/** System.Int32, held as a number (every int is exact in one). */
const int: Scalar<number, true> = {
  ...int32,
  soapMissing: 0,
  toXml(value) {
    if (!Number.isInteger(value)) throw new TypeError(`An int result must be an integer, not ${value}.`);
    return int32.toXml(BigInt(value));
  },
  fromXml: (text) => Number(int32.fromXml(text)),
  fromForm: (text) => Number(int32.fromForm(text)),
};

const boolean: Scalar<boolean, true> = {
  dotNet: 'System.Boolean',
  xsd: 's:boolean',
  element: 'boolean',
  sample: 'boolean',
  formNote: 'A boolean is True or False (in any case) in HTTP GET and POST, and true, false, 1 or 0 in SOAP.',
  valueType: true,
  soapMissing: false,
  toXml: (value) => (value ? 'true' : 'false'),
  fromXml(text) {
    // XmlConvert.ToBoolean: the schema's four literals.
    const s = trimXml(text);
    if (s === 'true' || s === '1') return true;
    if (s === 'false' || s === '0') return false;
    throw new ScalarFormatError(AsmxText.XmlConvert_BadFormat(s, 'Boolean'));
  },
  fromForm(text) {
    // Boolean.Parse: True or False in any case, white space (and NULs) around.
    const s = text.replace(/^[\s\0]+|[\s\0]+$/g, '').toLowerCase();
    if (s === 'true' || s === 'false') return s === 'true';
    throw new ScalarFormatError(AsmxText.Format_BadBoolean());
  },
};

/** System.Decimal, held as its invariant text (`-12.50`): a .NET decimal is exact and keeps its scale. */
const decimal: Scalar<string, true> = {
  dotNet: 'System.Decimal',
  xsd: 's:decimal',
  element: 'decimal',
  sample: 'decimal',
  valueType: true,
  soapMissing: '0',
  toXml: checkDecimal,
  fromXml: (text) => parseDecimal(text, false),
  fromForm: (text) => parseDecimal(text, true),
};

const double: Scalar<number, true> = {
  dotNet: 'System.Double',
  xsd: 's:double',
  element: 'double',
  sample: 'double',
  valueType: true,
  soapMissing: 0,
  toXml: formatDouble,
  fromXml: (text) => parseDouble(text, false),
  fromForm: (text) => parseDouble(text, true),
};

/** System.DateTime, held as a UTC instant and written as XmlSerializer writes a UTC DateTime. */
const dateTime: Scalar<Date, true> = {
  dotNet: 'System.DateTime',
  xsd: 's:dateTime',
  element: 'dateTime',
  sample: 'dateTime',
  valueType: true,
  soapMissing: new Date(-62135596800000),
  toXml: formatDateTime,
  fromXml(text) {
    const date = parseXsdDateTime(text, false);
    if (date === null) throw new ScalarFormatError(AsmxText.XmlConvert_BadFormat(text, 'AllXsd'));
    return date;
  },
  fromForm(text) {
    const date = parseXsdDateTime(text, true);
    if (date === null) throw new ScalarFormatError(AsmxText.Format_BadDateTime());
    return date;
  },
};

/** Every simple type, by the name a parameter's `type` or a result's `kind` gives. */
export const SCALARS = { string, char, int, long, boolean, decimal, double, dateTime } as const;

export type ScalarName = keyof typeof SCALARS;

/** The value an entry holds (`number` for an int), without null. */
export type ScalarValueOf<N extends ScalarName> = N extends ScalarName
  ? (typeof SCALARS)[N] extends Scalar<infer V, boolean>
    ? V
    : never
  : never;
/** The value as a method sees it: a string may be null, a value type never is. */
export type NullableValueOf<N extends ScalarName> = N extends ScalarName
  ? (typeof SCALARS)[N] extends Scalar<infer V, false>
    ? V | null
    : ScalarValueOf<N>
  : never;
/** Any simple value. */
export type ScalarValue = ScalarValueOf<ScalarName>;

/** The entry of a type name; the general signature the writers and readers work through. */
export function scalarOf(name: ScalarName): Scalar<ScalarValue> {
  return SCALARS[name] as Scalar<ScalarValue>;
}

/** True for a name of the table (a result's `kind` that is a simple type). */
export function isScalarName(name: string): name is ScalarName {
  return Object.hasOwn(SCALARS, name);
}
