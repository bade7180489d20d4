/**
 * The contract: what an operation is, described as data. Routing, parameter reading, answer
 * writing, WSDL, disco, help pages and the conformance tests all read these descriptions, so an
 * operation is added in one place.
 */
import { isScalarName } from './scalars.js';
import type { NullableValueOf, ScalarName, ScalarValue } from './scalars.js';

/**
 * A parameter's .NET type: a simple type of the table (scalars.ts), whose entry says how each
 * binding reads it. `char` is System.Char: on the SOAP wire an xs:unsignedShort (the UTF-16 code,
 * `49` for '1'), in HTTP GET/POST one literal character.
 */
export type ParamType = ScalarName;

export interface ParamSpec {
  readonly name: string;
  readonly type: ParamType;
  /** One line for help pages. */
  readonly doc: string;
  /**
   * Personal data: wherever the shadow keeps a request or an answer (docs/migrating.md), every
   * value the binding read for this parameter is masked, in any spelling: `phone` keeps its last
   * two digits, `secret` (a code) none. Beside `writes` on the operation.
   */
  readonly personal?: 'phone' | 'secret';
}

/** A class whose public fields are all strings, written by XmlSerializer in declaration order. */
export interface StructSpec {
  readonly name: string;
  readonly fields: readonly string[];
  /**
   * The field that tells one item of a list of it from another (StudentInfo's `id_student`): beside
   * the legacy service, list items are paired by it, so one student missing is one difference and
   * the same students in another order are an `order` difference (src/shadow). None: by position.
   */
  readonly key?: string;
  /** Fields that name a person (StudentInfo's `fullName`): masked in `sis shadow report` unless --show-personal. */
  readonly personal?: readonly string[];
}

/** The .NET return type: void, a simple type of the table (scalars.ts), T[] (a list of a struct) or a struct. */
export type ResultSpec =
  | { readonly kind: 'void' }
  | ScalarResultSpec
  | { readonly kind: 'list'; readonly item: StructSpec }
  | { readonly kind: 'struct'; readonly struct: StructSpec };

/** A struct value: field name → text, or null/undefined to leave the field out (as XmlSerializer does). */
export type StructValue = Readonly<Record<string, string | null | undefined>>;
/**
 * A list too long to hold at once: its items a page at a time, every page from one consistent
 * read. Stopping the iteration early (`return()`) releases what the pages are read from.
 */
export type ListPages = AsyncIterable<ReadonlyArray<StructValue | null>>;
/**
 * A list as .NET holds it: null (the element is left out), or items of which any may be null
 * (xsi:nil); or, when long, its pages (written as they come, in the same bytes).
 */
export type ListValue = ReadonlyArray<StructValue | null> | ListPages | null;

/** A result of a simple type: `{ kind: 'int' }`. */
export interface ScalarResultSpec {
  readonly kind: ScalarName;
}

/** The typed arguments of an operation: a string is null when absent (SOAP), a char is its UTF-16 code. */
export type ArgsOf<P extends readonly ParamSpec[]> = {
  readonly [K in P[number] as K['name']]: NullableValueOf<K['type']>;
};

export type ValueOf<R extends ResultSpec> = R extends { kind: 'void' }
  ? void
  : R extends { kind: 'list' }
    ? ListValue
    : R extends { kind: 'struct' }
      ? StructValue | null
      : R extends { kind: infer N extends ScalarName }
        ? NullableValueOf<N>
        : never;

/** Any argument value, as bindings hand it over before typing. */
export type ArgValue = ScalarValue | null;
/** Any result value, as bindings write it. */
export type ResultValue = void | ScalarValue | null | ListValue | StructValue;

/** True for a result of a simple type, whose entry in the table (scalars.ts) says how it is written. */
export function isScalarResult(result: ResultSpec): result is ScalarResultSpec {
  return isScalarName(result.kind);
}

export interface OperationSpec<
  P extends readonly ParamSpec[] = readonly ParamSpec[],
  R extends ResultSpec = ResultSpec,
  C = unknown,
> {
  /** The .asmx file (without extension) that serves the operation. */
  readonly service: string;
  readonly name: string;
  readonly doc: string;
  readonly params: P;
  readonly result: R;
  /**
   * A read whose answer depends only on its arguments and the stored data: its answers may be
   * kept while the data is unchanged (bindings/answer-cache.ts). Worth it where building the
   * answer costs far more than asking the store whether anything changed (long lists).
   */
  readonly cacheable?: boolean;
  /**
   * It changes something (AuthCode stores a code and sends an SMS): beside the legacy service it
   * is never sent twice (src/shadow), and its success says the database takes writes again
   * (observe/database-watch.ts). A new operation that writes must say so here.
   */
  readonly writes?: boolean;
  /**
   * The behaviour: knows nothing of XML or HTTP. A value at once where the store answers at once
   * (SQLite), else a promise. Method syntax keeps specs assignable to the general type.
   */
  run(args: ArgsOf<P>, ctx: C): ValueOf<R> | Promise<ValueOf<R>>;
}

export interface ServiceSpec<C = unknown> {
  readonly name: string;
  readonly operations: readonly OperationSpec<readonly ParamSpec[], ResultSpec, C>[];
}
