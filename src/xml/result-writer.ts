import type { ListValue, ResultSpec, ResultValue, StructSpec, StructValue } from '../contract/types.js';
import { ChunkedText } from './chunked-text.js';
import type { Body } from './chunked-text.js';
import { escapeText } from './escape.js';
import { XSD_NS, XSI_NS } from './namespaces.js';

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

function fieldsCompact(spec: StructSpec, value: StructValue): string {
  let out = '';
  for (const f of spec.fields) {
    const v = value[f];
    if (v === null || v === undefined) continue;
    out += v === '' ? `<${f} />` : `<${f}>${escapeText(v)}</${f}>`;
  }
  return out;
}

function fieldsIndented(spec: StructSpec, value: StructValue, indent: string): string {
  let out = '';
  for (const f of spec.fields) {
    const v = value[f];
    if (v === null || v === undefined) continue;
    out += v === '' ? `\n${indent}<${f} />` : `\n${indent}<${f}>${escapeText(v)}</${f}>`;
  }
  return out;
}

function structCompact(tag: string, spec: StructSpec, value: StructValue | null): string {
  if (value === null) return `<${tag} xsi:nil="true" />`;
  const inner = fieldsCompact(spec, value);
  return inner === '' ? `<${tag} />` : `<${tag}>${inner}</${tag}>`;
}

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
      return {
        soapBody(value) {
          const list = value as ListValue | undefined;
          if (list === null || list === undefined) return empty;
          if (list.length === 0) return withResult(`<${res} />`);
          if (list.length >= CHUNKED_FROM) {
            const out = new ChunkedText();
            out.add(`${open}<${res}>`);
            for (const v of list) out.add(structCompact(item.name, item, v));
            out.add(`</${res}>${close}`);
            return out.finish();
          }
          let out = `${open}<${res}>`;
          for (const v of list) out += structCompact(item.name, item, v);
          return `${out}</${res}>${close}`;
        },
        httpDocument(value) {
          const list = value as ListValue | undefined;
          if (list === null || list === undefined) return `<${root} ${NS_DECLS} xsi:nil="true" xmlns="${ns}" />`;
          if (list.length === 0) return `<${root} ${NS_DECLS} xmlns="${ns}" />`;
          const items = (add: (text: string) => void): void => {
            for (const v of list) {
              if (v === null) {
                add(`\n  <${item.name} xsi:nil="true" />`);
                continue;
              }
              const inner = fieldsIndented(item, v, '    ');
              add(inner === '' ? `\n  <${item.name} />` : `\n  <${item.name}>${inner}\n  </${item.name}>`);
            }
          };
          if (list.length >= CHUNKED_FROM) {
            const out = new ChunkedText();
            out.add(`<${root} ${NS_DECLS} xmlns="${ns}">`);
            items((t) => out.add(t));
            out.add(`\n</${root}>`);
            return out.finish();
          }
          let out = `<${root} ${NS_DECLS} xmlns="${ns}">`;
          items((t) => {
            out += t;
          });
          return `${out}\n</${root}>`;
        },
      };
    }

    case 'struct': {
      const spec = result.struct;
      return {
        soapBody(value) {
          const v = value as StructValue | null | undefined;
          if (v === null || v === undefined) return empty;
          return withResult(structCompact(res, spec, v));
        },
        httpDocument(value) {
          const v = value as StructValue | null | undefined;
          if (v === null || v === undefined) return `<${spec.name} ${NS_DECLS} xsi:nil="true" xmlns="${ns}" />`;
          const inner = fieldsIndented(spec, v, '  ');
          return inner === ''
            ? `<${spec.name} ${NS_DECLS} xmlns="${ns}" />`
            : `<${spec.name} ${NS_DECLS} xmlns="${ns}">${inner}\n</${spec.name}>`;
        },
      };
    }
  }
}
