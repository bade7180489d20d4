import { SaxesParser } from 'saxes';
import type { SaxesTagNS } from 'saxes';
import { AsmxText } from '../errors/asmx-text.js';
import { XmlReadError } from '../errors/errors.js';
import { scanEnvelope } from './envelope-scanner.js';
import type { Envelope, EnvelopeLimits, ParamText } from './envelope.js';
import { XSI_NS } from './namespaces.js';

export type { Envelope, EnvelopeLimits, ParamText } from './envelope.js';

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
  return new FullReader(paramNamespace, limits).read(xml);
}

/** One pass of saxes over one document; the fields are what has been seen so far. */
class FullReader {
  readonly #parser = new SaxesParser({ xmlns: true, position: true });
  #root: Envelope['root'] = null;
  #bodyElement: Envelope['bodyElement'];
  #mustUnderstand: string | null = null;
  readonly #params = new Map<string, ParamText>();
  #depth = 0;
  #attributes = 0;
  #inHeader = false;
  #inBody = false;
  /** Depth of the first body element, 0 before it, -1 after it (only it carries parameters). */
  #opDepth = 0;
  /** The param element being read. */
  #current: Pending | null = null;
  /** A finished param waiting for the next node's position. */
  #pending: Pending | null = null;
  #envNs = '';

  constructor(
    private readonly paramNamespace: string,
    private readonly limits: EnvelopeLimits,
  ) {
    const parser = this.#parser;
    parser.on('error', (err) => {
      throw err;
    });
    parser.on('doctype', () => this.fail(AsmxText.Xml_DtdIsProhibitedEx()));
    parser.on('opentagstart', () => {
      this.settle(1);
      this.#attributes = 0;
      if (++this.#depth > limits.maxDepth)
        this.fail(`The XML document nests elements deeper than ${limits.maxDepth} levels.`);
    });
    parser.on('attribute', () => {
      if (++this.#attributes > limits.maxAttributes)
        this.fail(`An element has more than ${limits.maxAttributes} attributes.`);
    });
    parser.on('opentag', (tag) => this.openTag(tag));
    parser.on('text', (text) => this.text(text));
    parser.on('cdata', (text) => this.text(text));
    parser.on('closetag', (tag) => this.closeTag(tag));
  }

  read(xml: string): Envelope {
    let error: XmlReadError | null = null;
    try {
      if (xml.trim() === '') this.fail(AsmxText.Xml_MissingRoot());
      this.#parser.write(xml).close();
      this.settle(0);
      if (this.#root === null) this.fail(AsmxText.Xml_MissingRoot());
    } catch (err) {
      error =
        err instanceof XmlReadError
          ? err
          : new XmlReadError(xmlMessage(err, xml, this.#parser, this.#root === null), this.#bodyElement === undefined);
    }
    return {
      root: this.#root,
      bodyElement: this.#bodyElement,
      mustUnderstand: this.#mustUnderstand,
      params: this.#params,
      error,
    };
  }

  private fail(message: string): never {
    throw new XmlReadError(message, this.#bodyElement === undefined);
  }

  /** Records the pending param now that the next node's position (plus `offset`) is known. */
  private settle(offset: number): void {
    const p = this.#pending;
    if (p === null) return;
    this.#pending = null;
    if (!this.#params.has(p.local) && this.#params.size < this.limits.maxParams) {
      this.#params.set(p.local, {
        text: p.text,
        nil: p.nil,
        complex: p.complex,
        after: { line: p.line, column: p.column + offset },
      });
    }
  }

  private openTag(tag: SaxesTagNS): void {
    const ns = tag.uri;
    const depth = this.#depth;
    if (depth === 1) {
      this.#root = { ns, local: tag.local };
      this.#envNs = ns;
    } else if (depth === 2) {
      this.#inHeader = ns === this.#envNs && tag.local === 'Header' && this.#bodyElement === undefined;
      if (ns === this.#envNs && tag.local === 'Body' && this.#bodyElement === undefined) {
        this.#inBody = true;
        this.#bodyElement = null;
      }
    } else if (depth === 3 && this.#inHeader && this.#mustUnderstand === null) {
      const mu = findAttr(tag, this.#envNs, 'mustUnderstand')?.value.trim();
      if (mu === '1' || mu === 'true') this.#mustUnderstand = tag.local;
    } else if (depth === 3 && this.#inBody && this.#bodyElement === null && this.#opDepth === 0) {
      this.#bodyElement = { ns, local: tag.local };
      this.#opDepth = depth;
    } else if (this.#opDepth > 0 && depth === this.#opDepth + 1 && ns === this.paramNamespace) {
      const nil = findAttr(tag, XSI_NS, 'nil')?.value.trim();
      this.#current = {
        local: tag.local,
        text: '',
        nil: nil === 'true' || nil === '1',
        complex: false,
        line: 0,
        column: 0,
      };
    } else if (this.#current !== null && depth > this.#opDepth + 1) {
      this.#current.complex = true;
    }
  }

  private text(text: string): void {
    this.settle(0);
    if (this.#current !== null && this.#depth === this.#opDepth + 1) this.#current.text += text;
  }

  private closeTag(tag: SaxesTagNS): void {
    this.settle(2);
    const current = this.#current;
    const depth = this.#depth;
    if (
      current !== null &&
      depth === this.#opDepth + 1 &&
      tag.uri === this.paramNamespace &&
      tag.local === current.local
    ) {
      current.line = this.#parser.line;
      current.column = this.#parser.column + 1;
      this.#pending = current;
      this.#current = null;
    }
    if (depth === this.#opDepth) this.#opDepth = -1;
    if (depth === 2) {
      this.#inBody = false;
      this.#inHeader = false;
    }
    this.#depth--;
  }
}

function findAttr(tag: SaxesTagNS, uri: string, local: string): SaxesTagNS['attributes'][string] | undefined {
  for (const name in tag.attributes) {
    const a = tag.attributes[name]!;
    if (a.uri === uri && a.local === local) return a;
  }
  return undefined;
}

/** A message in the spirit of .NET's XmlException for a saxes error. */
function xmlMessage(
  err: unknown,
  xml: string,
  parser: SaxesParser<{ xmlns: true; position: true }>,
  noRoot: boolean,
): string {
  const text = err instanceof Error ? err.message.replace(/^[^:]*:\d+:\d+: /, '') : 'unreadable XML';
  if (noRoot && /outside of root node|text data/i.test(text)) {
    // .NET points at the first character that is not markup.
    const at = xml.search(/[^\s]/);
    const before = xml.slice(0, Math.max(at, 0));
    const line = before.split('\n').length;
    const column = at - before.lastIndexOf('\n');
    return AsmxText.Xml_MessageWithErrorPosition(AsmxText.Xml_InvalidRootData(), line, column);
  }
  return AsmxText.Xml_MessageWithErrorPosition(AsmxText.XmlNotWellFormed(text), parser.line, parser.column + 1);
}
