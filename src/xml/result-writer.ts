import { isListPages } from '../contract/list-pages.js';
import type { ListValue, ResultSpec, ResultValue, StructValue } from '../contract/types.js';
import { ChunkedText } from './chunked-text.js';
import type { Body } from './chunked-text.js';
import { escapeText } from './escape.js';
import { streamList } from './list-stream.js';
import { XSD_NS, XSI_NS } from './namespaces.js';
import { compactStructWriter, indentedFieldsWriter, indentedItemWriter } from './struct-writer.js';

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

export function createResultWriter(opName: string, result: ResultSpec, namespace: string): ResultWriter {
  const ns = escapeText(namespace).replace(/"/g, '&quot;');
  const resp = `${opName}Response`;
  const res = `${opName}Result`;
  const empty = `<${resp} xmlns="${ns}" />`;
  const open = `<${resp} xmlns="${ns}">`;
  const close = `</${resp}>`;
  const withResult = (inner: string): string => `${open}${inner}${close}`;

  switch (result.kind) {
    case 'void':
      return { soapBody: () => empty, httpDocument: () => null };

    case 'string': {
      const nil = `<string ${NS_DECLS} xsi:nil="true" xmlns="${ns}" />`;
      return {
        soapBody(value) {
          const v = value as string | null | undefined;
          if (v === null || v === undefined) return empty;
          return withResult(v === '' ? `<${res} />` : `<${res}>${escapeText(v)}</${res}>`);
        },
        httpDocument(value) {
          const v = value as string | null | undefined;
          if (v === null || v === undefined) return nil;
          return v === '' ? `<string xmlns="${ns}" />` : `<string xmlns="${ns}">${escapeText(v)}</string>`;
        },
      };
    }

    case 'list': {
      const item = result.item;
      const root = `ArrayOf${item.name}`;
      const compactItem = compactStructWriter(item.name, item);
      const indentedItem = indentedItemWriter(item);
      const rootOpen = `<${root} ${NS_DECLS} xmlns="${ns}">`;
      const rootClose = `\n</${root}>`;
      const rootEmpty = `<${root} ${NS_DECLS} xmlns="${ns}" />`;
      const soapFrame = { open: `${open}<${res}>`, close: `</${res}>${close}`, empty: withResult(`<${res} />`) };
      const httpFrame = { open: rootOpen, close: rootClose, empty: rootEmpty };
      return {
        soapBody(value) {
          const list = value as ListValue | undefined;
          if (list === null || list === undefined) return empty;
          if (isListPages(list)) return streamList(list, compactItem, soapFrame);
          if (list.length === 0) return withResult(`<${res} />`);
          if (list.length >= CHUNKED_FROM) {
            const out = new ChunkedText();
            out.add(soapFrame.open);
            for (const v of list) out.add(compactItem(v));
            out.add(soapFrame.close);
            return out.finish();
          }
          let out = soapFrame.open;
          for (const v of list) out += compactItem(v);
          return out + soapFrame.close;
        },
        httpDocument(value) {
          const list = value as ListValue | undefined;
          if (list === null || list === undefined) return `<${root} ${NS_DECLS} xsi:nil="true" xmlns="${ns}" />`;
          if (isListPages(list)) return streamList(list, indentedItem, httpFrame);
          if (list.length === 0) return rootEmpty;
          if (list.length >= CHUNKED_FROM) {
            const out = new ChunkedText();
            out.add(rootOpen);
            for (const v of list) out.add(indentedItem(v));
            out.add(rootClose);
            return out.finish();
          }
          let out = rootOpen;
          for (const v of list) out += indentedItem(v);
          return out + rootClose;
        },
      };
    }

    case 'struct': {
      const spec = result.struct;
      const compact = compactStructWriter(res, spec);
      const indented = indentedFieldsWriter(spec);
      return {
        soapBody(value) {
          const v = value as StructValue | null | undefined;
          if (v === null || v === undefined) return empty;
          return withResult(compact(v));
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
  }
}
