import { SaxesParser } from 'saxes';
import type { SaxesTagNS } from 'saxes';
import { XmlReadError } from '../errors/errors.js';
import { scanEnvelope } from './envelope-scanner.js';
import { XSI_NS } from './namespaces.js';

/** The text of one child of the operation element, with what ASMX's reader would need of it. */
export interface ParamText {
  readonly text: string;
  /** `xsi:nil="true"` was set (a string reads as "", a char fails). */
  readonly nil: boolean;
  /** The element had element children (ASMX's ReadElementString fails on it). */
  readonly complex: boolean;
  /** Line and column (1-based, UTF-16 units) of the node after the element, as .NET reports. */
  readonly after: { readonly line: number; readonly column: number };
}

/** What one pass over a SOAP request tells the protocol; nothing here decides an answer. */
export interface Envelope {
  /** Namespace and local name of the root element; null when the document has no root. */
  readonly root: { readonly ns: string; readonly local: string } | null;
  /**
   * The first element inside Body: undefined when no Body was found, null when it is empty.
   * Body is looked up in the root's own namespace, as ASMX does while routing.
   */
  readonly bodyElement: { readonly ns: string; readonly local: string } | null | undefined;
  /** Local name of the first header marked mustUnderstand ("1" or "true"), if any. */
  readonly mustUnderstand: string | null;
  /** Children of the first body element in `paramNamespace`, by local name; the first wins. */
  readonly params: ReadonlyMap<string, ParamText>;
  readonly error: XmlReadError | null;
}

export interface EnvelopeLimits {
  readonly maxDepth: number;
  readonly maxAttributes: number;
  readonly maxParams: number;
}

/** Where a pending ParamText waits for the next node to know its `after` position. */
interface Pending {
  local: string;
  text: string;
  nil: boolean;
  complex: boolean;
  line: number;
  column: number;
}

/**
 * Reads a decoded SOAP request in one streaming pass (saxes: strict, namespace-aware, never
 * expands DTD entities). DOCTYPE is refused outright, as ASMX prohibits DTDs; depth and
 * attribute counts are capped so a hostile document costs bounded work.
 */
export function readEnvelope(xml: string, paramNamespace: string, limits: EnvelopeLimits): Envelope {
  return scanEnvelope(xml, paramNamespace) ?? readEnvelopeFully(xml, paramNamespace, limits);
}

/** The complete reader: any document, every error with .NET's wording where we know it. */
export function readEnvelopeFully(xml: string, paramNamespace: string, limits: EnvelopeLimits): Envelope {
  const parser = new SaxesParser({ xmlns: true, position: true });
  let root: Envelope['root'] = null;
  let bodyElement: Envelope['bodyElement'];
  let mustUnderstand: string | null = null;
  const params = new Map<string, ParamText>();

  let depth = 0;
  let attributes = 0;
  let inHeader = false;
  let inBody = false;
  let opDepth = 0; // depth of the first body element, 0 when not inside one
  let current: Pending | null = null; // the param element being read
  let pending: Pending | null = null; // a finished param waiting for the next node's position
  let envNs = '';

  const settle = (offset: number): void => {
    if (pending === null) return;
    const p = pending;
    pending = null;
    if (!params.has(p.local) && params.size < limits.maxParams) {
      params.set(p.local, {
        text: p.text,
        nil: p.nil,
        complex: p.complex,
        after: { line: p.line, column: p.column + offset },
      });
    }
  };
  const fail = (message: string): never => {
    throw new XmlReadError(message, bodyElement === undefined);
  };

  parser.on('error', (err) => {
    throw err;
  });
  parser.on('doctype', () =>
    fail(
      'For security reasons DTD is prohibited in this XML document. To enable DTD processing set the DtdProcessing property on XmlReaderSettings to Parse and pass the settings to XmlReader.Create method.',
    ),
  );
  parser.on('opentagstart', () => {
    settle(1);
    attributes = 0;
    if (++depth > limits.maxDepth) fail(`The XML document nests elements deeper than ${limits.maxDepth} levels.`);
  });
  parser.on('attribute', () => {
    if (++attributes > limits.maxAttributes) {
      fail(`An element has more than ${limits.maxAttributes} attributes.`);
    }
  });
  parser.on('opentag', (tag: SaxesTagNS) => {
    const ns = tag.uri;
    if (depth === 1) {
      root = { ns, local: tag.local };
      envNs = ns;
    } else if (depth === 2) {
      inHeader = ns === envNs && tag.local === 'Header' && bodyElement === undefined;
      if (ns === envNs && tag.local === 'Body' && bodyElement === undefined) {
        inBody = true;
        bodyElement = null;
      }
    } else if (depth === 3 && inHeader && mustUnderstand === null) {
      const mu = findAttr(tag, envNs, 'mustUnderstand');
      if (mu !== undefined && (mu.value.trim() === '1' || mu.value.trim() === 'true')) {
        mustUnderstand = tag.local;
      }
    } else if (depth === 3 && inBody && bodyElement === null && opDepth === 0) {
      bodyElement = { ns, local: tag.local };
      opDepth = depth;
    } else if (opDepth > 0 && depth === opDepth + 1 && ns === paramNamespace) {
      const nilAttr = findAttr(tag, XSI_NS, 'nil');
      const nil = nilAttr !== undefined && (nilAttr.value.trim() === 'true' || nilAttr.value.trim() === '1');
      current = { local: tag.local, text: '', nil, complex: false, line: 0, column: 0 };
    } else if (current !== null && depth > opDepth + 1) {
      current.complex = true;
    }
  });
  const onText = (text: string): void => {
    settle(0);
    if (current !== null && depth === opDepth + 1) current.text += text;
  };
  parser.on('text', onText);
  parser.on('cdata', onText);
  parser.on('closetag', (tag: SaxesTagNS) => {
    settle(2);
    if (current !== null && depth === opDepth + 1 && tag.uri === paramNamespace && tag.local === current.local) {
      current.line = parser.line;
      current.column = parser.column + 1;
      pending = current;
      current = null;
    }
    if (depth === opDepth) opDepth = -1; // only the first body element carries parameters
    if (depth === 2) {
      if (inBody) inBody = false;
      inHeader = false;
    }
    depth--;
  });

  try {
    if (xml.trim() === '') fail('Root element is missing.');
    parser.write(xml).close();
    settle(0);
    if (root === null) fail('Root element is missing.');
  } catch (err) {
    const error =
      err instanceof XmlReadError
        ? err
        : new XmlReadError(xmlMessage(err, xml, parser, root === null), bodyElement === undefined);
    return { root, bodyElement, mustUnderstand, params, error };
  }
  return { root, bodyElement, mustUnderstand, params, error: null };
}

function findAttr(tag: SaxesTagNS, uri: string, local: string): SaxesTagNS['attributes'][string] | undefined {
  for (const name in tag.attributes) {
    const a = tag.attributes[name]!;
    if (a.uri === uri && a.local === local) return a;
  }
  return undefined;
}

/** A message in the spirit of .NET's XmlException for a saxes error. */
function xmlMessage(err: unknown, xml: string, parser: SaxesParser<{ xmlns: true; position: true }>, noRoot: boolean): string {
  const text = err instanceof Error ? err.message.replace(/^[^:]*:\d+:\d+: /, '') : 'unreadable XML';
  if (noRoot && /outside of root node|text data/i.test(text)) {
    // .NET points at the first character that is not markup.
    const at = xml.search(/[^\s]/);
    const before = xml.slice(0, Math.max(at, 0));
    const line = before.split('\n').length;
    const column = at - before.lastIndexOf('\n');
    return `Data at the root level is invalid. Line ${line}, position ${column}.`;
  }
  return `The XML is not well-formed: ${text} Line ${parser.line}, position ${parser.column + 1}.`;
}
