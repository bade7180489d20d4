/**
 * The one place where text becomes XML. ASMX escapes only `&`, `<` and `>` in text (quotes stay
 * literal), writes non-ASCII as raw UTF-8 and CR, LF, TAB raw. Characters XML 1.0 forbids are
 * refused where data enters the store (decision 4); should one arrive anyway it becomes U+FFFD
 * here, so every answer stays well-formed.
 */

const TEXT_SPECIAL = /[&<>\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/;
const TEXT_SPECIAL_G = new RegExp(TEXT_SPECIAL.source, 'g');
const ATTR_SPECIAL = /[&<>"\t\n\r\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/;
const ATTR_SPECIAL_G = new RegExp(ATTR_SPECIAL.source, 'g');

function replaceChar(c: string): string {
  switch (c) {
    case '&':
      return '&amp;';
    case '<':
      return '&lt;';
    case '>':
      return '&gt;';
    case '"':
      return '&quot;';
    // Attribute values normalise raw whitespace; character references keep it.
    case '\t':
      return '&#x9;';
    case '\n':
      return '&#xA;';
    case '\r':
      return '&#xD;';
    default:
      return '\uFFFD';
  }
}

/** Escapes element text as XmlTextWriter does (quotes stay literal). */
export function escapeText(text: string): string {
  // The test first: most values need no change, and test() allocates nothing.
  return TEXT_SPECIAL.test(text) ? text.replace(TEXT_SPECIAL_G, replaceChar) : text;
}

/** Escapes a double-quoted attribute value. */
export function escapeAttr(text: string): string {
  return ATTR_SPECIAL.test(text) ? text.replace(ATTR_SPECIAL_G, replaceChar) : text;
}

/** Escapes text for HTML (help and error pages): also quotes, since values land in attributes too. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) =>
    c === '&' ? '&amp;' : c === '<' ? '&lt;' : c === '>' ? '&gt;' : c === '"' ? '&quot;' : '&#39;',
  );
}

/** True when the text holds a character XML 1.0 does not allow (a lone surrogate included). */
export function hasXmlForbiddenChar(text: string): boolean {
  return /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(
    text,
  );
}
