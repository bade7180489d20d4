/**
 * A whole XML document read into a tree, for whoever reads an answer rather than a request (the
 * shadow's comparison, the tests' clients): namespace prefixes resolved (element and attribute
 * names, and QName values such as `type="tns:Student"`), attributes by name whatever their order,
 * whitespace between elements dropped. Parsed strictly with saxes; a DOCTYPE is refused (no DTD,
 * no entity is ever expanded), as for requests. Requests are read by envelope-reader.ts instead,
 * which streams and caps what it keeps.
 */
import { SaxesParser } from 'saxes';

export interface XmlNode {
  /** `{namespace}local`: what makes two elements the same element. */
  readonly key: string;
  /** The local name, for paths. */
  readonly local: string;
  /** By `{namespace}local` (namespace declarations left out): value and local name. */
  readonly attrs: Map<string, { readonly local: string; readonly value: string }>;
  readonly children: XmlNode[];
  text: string;
}

const XMLNS = 'http://www.w3.org/2000/xmlns/';
const QNAME = /^([A-Za-z_][\w.-]*):([A-Za-z_][\w.-]*)$/;

/** Options of the parse: `value` rewrites every text and attribute value (the service's address set aside). */
export interface ParseOptions {
  readonly value?: (text: string) => string;
}

/** The tree, or null when the text is not one well-formed XML document (or declares a DTD). */
export function parseTree(text: string, options: ParseOptions = {}): XmlNode | null {
  try {
    return readTree(text, options);
  } catch {
    return null;
  }
}

/** The tree; throws, saying where, when the text is not one well-formed XML document (or declares a DTD). */
export function readTree(text: string, options: ParseOptions = {}): XmlNode {
  const parser = new SaxesParser({ xmlns: true });
  const rewrite = options.value ?? ((v: string) => v);
  const stack: XmlNode[] = [];
  const scopes: Map<string, string>[] = [];
  let root: XmlNode | null = null;
  parser.on('error', (err) => {
    throw err;
  });
  parser.on('doctype', () => {
    throw new Error('a DOCTYPE is refused');
  });
  parser.on('opentag', (tag) => {
    // Maps, not objects: the prefixes are the answer's to choose.
    const scope = new Map(scopes.at(-1));
    for (const [prefix, uri] of Object.entries(tag.ns)) scope.set(prefix, uri);
    scopes.push(scope);
    const attrs = new Map<string, { local: string; value: string }>();
    for (const a of Object.values(tag.attributes)) {
      if (a.uri === XMLNS || a.name === 'xmlns') continue;
      attrs.set(`{${a.uri}}${a.local}`, { local: a.local, value: rewrite(resolveQName(a.value, scope)) });
    }
    const node: XmlNode = { key: `{${tag.uri}}${tag.local}`, local: tag.local, attrs, children: [], text: '' };
    stack.at(-1)?.children.push(node);
    root ??= node;
    stack.push(node);
  });
  parser.on('text', (t) => {
    const top = stack.at(-1);
    if (top !== undefined) top.text += t;
  });
  parser.on('cdata', (t) => {
    const top = stack.at(-1);
    if (top !== undefined) top.text += t;
  });
  parser.on('closetag', () => {
    const node = stack.pop()!;
    scopes.pop();
    // Whitespace between elements is layout, not content.
    if (node.children.length > 0 && node.text.trim() === '') node.text = '';
    else node.text = rewrite(node.text);
  });
  parser.write(text).close();
  if (root === null) throw new Error('no root element');
  return root;
}

/** The first child element of that local name, if any. */
export function child(node: XmlNode, local: string): XmlNode | undefined {
  return node.children.find((c) => c.local === local);
}

/** `tns:Student` as `{namespace}Student` when `tns` is bound; any other value as it is. */
function resolveQName(value: string, scope: ReadonlyMap<string, string>): string {
  const m = QNAME.exec(value);
  if (m === null) return value;
  const uri = scope.get(m[1]!);
  return uri === undefined ? value : `{${uri}}${m[2]!}`;
}
