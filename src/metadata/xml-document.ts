/**
 * A minimal element tree and the serializer ASMX's metadata documents share: XML declaration, LF,
 * two-space indentation, `<a />` for empty elements and no trailing newline (as XmlTextWriter
 * writes WSDL and disco). Attribute values are escaped here, so callers pass plain text.
 */
import { escapeAttr } from '../xml/escape.js';
import { XML_DECLARATION } from '../xml/namespaces.js';

export interface XmlElement {
  readonly name: string;
  /** Written in insertion order: ASMX's attribute order is part of the byte-for-byte contract. */
  readonly attrs: Readonly<Record<string, string>>;
  readonly children: readonly XmlElement[];
}

export function el(
  name: string,
  attrs: Readonly<Record<string, string>> = {},
  children: readonly XmlElement[] = [],
): XmlElement {
  return { name, attrs, children };
}

/** The document: declaration, LF, then the indented tree. */
export function serializeDocument(root: XmlElement): string {
  const lines = [XML_DECLARATION];
  writeElement(root, 0, lines);
  return lines.join('\n');
}

function writeElement(node: XmlElement, depth: number, lines: string[]): void {
  const pad = '  '.repeat(depth);
  let open = `${pad}<${node.name}`;
  for (const [key, value] of Object.entries(node.attrs)) open += ` ${key}="${escapeAttr(value)}"`;
  if (node.children.length === 0) {
    lines.push(`${open} />`);
    return;
  }
  lines.push(`${open}>`);
  for (const child of node.children) writeElement(child, depth + 1, lines);
  lines.push(`${pad}</${node.name}>`);
}
