/**
 * A sketch of the proposed list writer for large answers (see RESULTS.md): items are encoded
 * straight into 64 KiB buffers instead of one string that is flattened and then copied into a
 * Buffer. Not used by the service; micro.js times it next to the current writer and checks that
 * both produce the same bytes.
 */
import type { StructValue } from '../../src/contract/types.js';
import { escapeText } from '../../src/xml/escape.js';

const CHUNK = 64 * 1024;

export function writeListChunks(
  opName: string,
  namespace: string,
  item: string,
  fields: readonly string[],
  list: readonly (StructValue | null)[],
): Buffer[] {
  const out: Buffer[] = [];
  let buf = Buffer.allocUnsafe(CHUNK);
  let at = 0;
  let pending = '';
  // Strings are gathered up to a few KiB before encoding: one write per item costs more than it saves.
  const flush = (): void => {
    const n = Buffer.byteLength(pending);
    if (at + n > buf.length) {
      out.push(buf.subarray(0, at));
      buf = Buffer.allocUnsafe(Math.max(CHUNK, n));
      at = 0;
    }
    at += buf.write(pending, at);
    pending = '';
  };
  pending = `<${opName}Response xmlns="${namespace}"><${opName}Result>`;
  for (const v of list) {
    if (v === null) {
      pending += `<${item} xsi:nil="true" />`;
    } else {
      let inner = '';
      for (const f of fields) {
        const x = v[f];
        if (x === null || x === undefined) continue;
        inner += x === '' ? `<${f} />` : `<${f}>${escapeText(x)}</${f}>`;
      }
      pending += inner === '' ? `<${item} />` : `<${item}>${inner}</${item}>`;
    }
    if (pending.length > 4096) flush();
  }
  pending += `</${opName}Result></${opName}Response>`;
  flush();
  out.push(buf.subarray(0, at));
  return out;
}
