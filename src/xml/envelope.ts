/** What the envelope readers (the fast scanner and the complete saxes reader) tell the protocol. */
import type { XmlReadError } from '../errors/errors.js';

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
