/** Decoding a file's bytes as UTF-8, strictly: what the JSON and CSV readers share. */

export class InvalidUtf8Error extends Error {
  readonly code = 'ERR_INVALID_UTF8';
  constructor(readonly byteOffset: number) {
    super(`the file is not valid UTF-8 text (near byte ${byteOffset})`);
    this.name = 'InvalidUtf8Error';
  }
}

/** Decodes a byte stream strictly: a wrong encoding must be reported, not imported as U+FFFD. A BOM is dropped. */
export async function* decodeUtf8(chunks: AsyncIterable<Uint8Array | string>): AsyncGenerator<string> {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let offset = 0;
  for await (const chunk of chunks) {
    if (typeof chunk === 'string') {
      yield chunk;
      continue;
    }
    let text: string;
    try {
      text = decoder.decode(chunk, { stream: true });
    } catch {
      throw new InvalidUtf8Error(offset + firstInvalidUtf8(chunk));
    }
    offset += chunk.length;
    if (text !== '') yield text;
  }
  let rest: string;
  try {
    rest = decoder.decode();
  } catch {
    throw new InvalidUtf8Error(offset); // the file ends inside a character
  }
  if (rest !== '') yield rest;
}

/** About where in `bytes` the decoder gave up, for the message (overlong forms are not told apart). */
function firstInvalidUtf8(bytes: Uint8Array): number {
  let i = 0;
  // The end of a character the previous chunk started.
  while (i < 3 && i < bytes.length && (bytes[i]! & 0xc0) === 0x80) i++;
  while (i < bytes.length) {
    const b = bytes[i]!;
    const need =
      b < 0x80 ? 0 : b >= 0xc2 && b <= 0xdf ? 1 : b >= 0xe0 && b <= 0xef ? 2 : b >= 0xf0 && b <= 0xf4 ? 3 : -1;
    if (need < 0) return i;
    for (let k = 1; k <= need; k++) {
      const c = bytes[i + k];
      if (c === undefined) return i;
      if ((c & 0xc0) !== 0x80) return i;
    }
    i += need + 1;
  }
  return Math.max(0, bytes.length - 1);
}
