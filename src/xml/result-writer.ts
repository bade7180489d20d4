import { isListPages } from '../contract/list-pages.js';
import { scalarOf } from '../contract/scalars.js';
import type { Scalar, ScalarValue } from '../contract/scalars.js';
import type { ListValue, ResultSpec, ResultValue, StructSpec, StructValue } from '../contract/types.js';
import type { Body } from '../reply/reply.js';
import { ChunkedText } from './chunked-text.js';
import { escapeText } from './escape.js';
import { streamList } from './list-stream.js';
import { XSD_NS, XSI_NS } from './namespaces.js';
import { compactStructWriter, indentedFieldsWriter, indentedItemWriter } from './struct-writer.js';
import type { StructWriter } from './struct-writer.js';

/**
 * Writes an operation's result as ASMX's XmlSerializer does, in its two styles:
 * - `soapBody`: the `<OpResponse>` element for a SOAP body, on one line, never indented;
 * - `httpDocument`: the root document of an HTTP GET/POST answer, indented by two spaces, or
 *   null for a void operation (which answers with no body at all).
 * Null leaves an element out in SOAP and becomes `xsi:nil` at an HTTP root; an empty string
 * self-closes. All strings that do not depend on the value are built once, here.
 */
export interface ResultWriter {
  soapBody(value: ResultValue): Body;
  httpDocument(value: ResultValue): Body | null;
}

/** Lists longer than this are written in UTF-8 pieces rather than one string. */
const CHUNKED_FROM = 256;

const NS_DECLS = `xmlns:xsd="${XSD_NS}" xmlns:xsi="${XSI_NS}"`;

/** What every kind of result writes around its value: the response element, open or empty. */
interface Frame {
  readonly ns: string;
  /** `<OpResult>`'s name. */
  readonly res: string;
  readonly empty: string;
  readonly open: string;
  readonly close: string;
}

export function createResultWriter(opName: string, result: ResultSpec, namespace: string): ResultWriter {
  const ns = escapeText(namespace).replace(/"/g, '&quot;');
  const resp = `${opName}Response`;
  const frame: Frame = {
    ns,
    res: `${opName}Result`,
    empty: `<${resp} xmlns="${ns}" />`,
    open: `<${resp} xmlns="${ns}">`,
    close: `</${resp}>`,
  };
  switch (result.kind) {
    case 'void':
      return { soapBody: () => frame.empty, httpDocument: () => null };
    case 'list':
      return listWriter(frame, result.item);
    case 'struct':
      return structWriter(frame, result.struct);
    default:
      return scalarWriter(frame, scalarOf(result.kind));
  }
}

/**
 * A simple value in its XmlConvert text (scalars.ts), under `<OpResult>` in SOAP or as the root
 * named after its type (`<int>`, `<string>`) in GET/POST. Only a string can be null.
 */
function scalarWriter({ ns, res, empty, open, close }: Frame, scalar: Scalar<ScalarValue>): ResultWriter {
  const root = scalar.element;
  const nil = `<${root} ${NS_DECLS} xsi:nil="true" xmlns="${ns}" />`;
  return {
    soapBody(value) {
      const v = value as ScalarValue | null | undefined;
      if (v === null || v === undefined) return empty;
      const text = escapeText(scalar.toXml(v));
      return `${open}${text === '' ? `<${res} />` : `<${res}>${text}</${res}>`}${close}`;
    },
    httpDocument(value) {
      const v = value as ScalarValue | null | undefined;
      if (v === null || v === undefined) return nil;
      const text = escapeText(scalar.toXml(v));
      return text === '' ? `<${root} xmlns="${ns}" />` : `<${root} xmlns="${ns}">${text}</${root}>`;
    },
  };
}

/** Where a list's items go: between `open` and `close`, or `empty` when there are none. */
interface ListFrame {
  readonly open: string;
  readonly close: string;
  readonly empty: string;
}

function listWriter({ ns, res, empty, open, close }: Frame, item: StructSpec): ResultWriter {
  const root = `ArrayOf${item.name}`;
  const compactItem = compactStructWriter(item.name, item);
  const indentedItem = indentedItemWriter(item);
  const soapFrame: ListFrame = {
    open: `${open}<${res}>`,
    close: `</${res}>${close}`,
    empty: `${open}<${res} />${close}`,
  };
  const httpFrame: ListFrame = {
    open: `<${root} ${NS_DECLS} xmlns="${ns}">`,
    close: `\n</${root}>`,
    empty: `<${root} ${NS_DECLS} xmlns="${ns}" />`,
  };
  const httpNil = `<${root} ${NS_DECLS} xsi:nil="true" xmlns="${ns}" />`;
  return {
    soapBody(value) {
      const list = value as ListValue | undefined;
      return list === null || list === undefined ? empty : writeList(list, compactItem, soapFrame);
    },
    httpDocument(value) {
      const list = value as ListValue | undefined;
      return list === null || list === undefined ? httpNil : writeList(list, indentedItem, httpFrame);
    },
  };
}

/** A list held whole: one string, or UTF-8 pieces when long; pages (a long list) are streamed. */
function writeList(list: NonNullable<ListValue>, item: StructWriter, frame: ListFrame): Body {
  if (isListPages(list)) return streamList(list, item, frame);
  if (list.length === 0) return frame.empty;
  if (list.length >= CHUNKED_FROM) {
    const out = new ChunkedText();
    out.add(frame.open);
    for (const v of list) out.add(item(v));
    out.add(frame.close);
    return out.finish();
  }
  let out = frame.open;
  for (const v of list) out += item(v);
  return out + frame.close;
}

function structWriter({ ns, res, empty, open, close }: Frame, spec: StructSpec): ResultWriter {
  const compact = compactStructWriter(res, spec);
  const indented = indentedFieldsWriter(spec);
  return {
    soapBody(value) {
      const v = value as StructValue | null | undefined;
      return v === null || v === undefined ? empty : `${open}${compact(v)}${close}`;
    },
    httpDocument(value) {
      const v = value as StructValue | null | undefined;
      if (v === null || v === undefined) return `<${spec.name} ${NS_DECLS} xsi:nil="true" xmlns="${ns}" />`;
      const inner = indented(v);
      return inner === ''
        ? `<${spec.name} ${NS_DECLS} xmlns="${ns}" />`
        : `<${spec.name} ${NS_DECLS} xmlns="${ns}">${inner}\n</${spec.name}>`;
    },
  };
}
