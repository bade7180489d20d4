import type { ListPages, StructValue } from '../contract/types.js';
import type { StreamedBody } from '../reply/reply.js';
import { ChunkedText } from './chunked-text.js';
import type { StructWriter } from './struct-writer.js';

/** The text around a list's items: `open` before the first, `close` after the last; `empty` alone for none. */
export interface ListFrame {
  readonly open: string;
  readonly close: string;
  readonly empty: string;
}

/**
 * A list written page by page as it is read: each page's items become UTF-8 pieces handed out
 * at once, so only a page is ever held. The bytes are those of the same list written whole.
 * The frame opens with the first item, not before: a list found empty writes `empty`, as ever.
 */
export function streamList(pages: ListPages, item: StructWriter, frame: ListFrame): StreamedBody {
  // Taken now, so close() can release the source even if next() is never called.
  const source: AsyncIterator<ReadonlyArray<StructValue | null>> = pages[Symbol.asyncIterator]();
  const out = new ChunkedText();
  let opened = false;
  let ended = false;
  let closed: Promise<void> | null = null;
  return {
    async next() {
      while (!ended) {
        const page = await source.next();
        if (page.done === true) {
          ended = true;
          out.add(opened ? frame.close : frame.empty);
          return out.take();
        }
        if (page.value.length === 0) continue;
        if (!opened) {
          opened = true;
          out.add(frame.open);
        }
        for (const value of page.value) out.add(item(value));
        return out.take();
      }
      return null;
    },
    close() {
      closed ??= (async () => {
        ended = true;
        try {
          await source.return?.();
        } catch {
          // The source failed already (its error was what ended the stream): nothing more to release.
        }
      })();
      return closed;
    },
  };
}
