/** node-soap's answers are checked by their values: its bytes differ from ASMX's (prefixes, escaping). */
import type { PeerExpectation } from '../scenarios/scenario.js';

/** Decodes the five XML entities and character references, to compare values, not bytes. */
export function decodeEntities(xml: string): string {
  return xml.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|amp|lt|gt|quot|apos);/g, (_m, e: string) => {
    if (e.startsWith('#x')) return String.fromCodePoint(parseInt(e.slice(2), 16));
    if (e.startsWith('#')) return String.fromCodePoint(parseInt(e.slice(1), 10));
    return { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" }[e] ?? '';
  });
}

/** Null when node-soap's answer holds what it must; otherwise what is wrong. */
export function checkPeerBody(body: string, expect: PeerExpectation): string | null {
  if (expect.items !== undefined) {
    const items = body.match(/<(?:[\w.-]+:)?StudentInfo>/g)?.length ?? 0;
    if (items !== expect.items) return `${items} StudentInfo elements, expected ${expect.items}`;
  }
  const decoded = decodeEntities(body);
  let at = 0;
  for (const v of expect.values) {
    const found = decoded.indexOf(v, at);
    if (found < 0) return `value ${JSON.stringify(v)} missing (or out of order)`;
    at = found + v.length;
  }
  return null;
}
