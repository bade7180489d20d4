import { isUtf8 } from 'node:buffer';
import { AsmxText } from '../errors/asmx-text.js';
import { XmlReadError } from '../errors/errors.js';

/**
 * Turns request bytes into text the way .NET's XmlReader picks an encoding: a byte order mark
 * first, then the Content-Type charset, then the byte pattern of a UTF-16 document without BOM,
 * then UTF-8. Invalid bytes are an XML error (400), never silently replaced.
 */
export function decodeXml(body: Buffer, charset: string | undefined): string {
  let encoding = 'utf-8';
  let start = 0;
  if (body.length >= 3 && body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf) {
    start = 3;
  } else if (body.length >= 2 && body[0] === 0xff && body[1] === 0xfe) {
    encoding = 'utf-16le';
    start = 2;
  } else if (body.length >= 2 && body[0] === 0xfe && body[1] === 0xff) {
    encoding = 'utf-16be';
    start = 2;
  } else if (body.length >= 2 && body[0] === 0x3c && body[1] === 0x00) {
    encoding = 'utf-16le';
  } else if (body.length >= 2 && body[0] === 0x00 && body[1] === 0x3c) {
    encoding = 'utf-16be';
  } else if (charset !== undefined && charset !== '') {
    encoding = charset.toLowerCase() === 'utf-16' ? 'utf-16le' : charset;
  }
  if (/^utf-?8$/i.test(encoding)) {
    // The common case: a native validity check, then the fastest decoder.
    const bytes = start === 0 ? body : body.subarray(start);
    if (!isUtf8(bytes)) throw new XmlReadError(AsmxText.Xml_InvalidCharInThisEncoding(), true);
    return bytes.toString('utf8');
  }
  const decoder = decoderFor(encoding);
  if (decoder === null) throw new XmlReadError(AsmxText.Xml_UnknownEncoding(charset ?? encoding), true);
  try {
    return decoder.decode(start === 0 ? body : body.subarray(start));
  } catch {
    throw new XmlReadError(AsmxText.Xml_InvalidCharInThisEncoding(), true);
  }
}

const decoders = new Map<string, TextDecoder | null>();

/** Decoders are stateless between whole-buffer calls: one per encoding label, made once. */
function decoderFor(label: string): TextDecoder | null {
  const key = label.toLowerCase();
  let decoder = decoders.get(key);
  if (decoder === undefined) {
    try {
      decoder = new TextDecoder(key, { fatal: true, ignoreBOM: true });
    } catch {
      decoder = null;
    }
    // Labels come from requests: remember only a bounded number.
    if (decoders.size < 64) decoders.set(key, decoder);
  }
  return decoder;
}
