import type { ListPages, ListValue, StructValue } from './types.js';

type Item = StructValue | null;

/** True for a list given as pages (ListPages), false for one held whole. */
export function isListPages(list: Exclude<ListValue, null>): list is ListPages {
  return !Array.isArray(list);
}

/**
 * Reads up to two pages: a list that ends within its first page is answered whole, as any small
 * answer; a longer one stays pages, replayed from the start. A failure while reading those two
 * pages rejects here, so it is still answered as an ordinary fault.
 */
export async function settleList(pages: AsyncIterable<readonly Item[]>): Promise<readonly Item[] | ListPages> {
  const source = pages[Symbol.asyncIterator]();
  const first = await source.next();
  if (first.done === true) return [];
  const second = await source.next();
  if (second.done === true) return first.value;
  const read: Array<readonly Item[]> = [first.value, second.value];
  // Hand-written rather than a generator: return() must reach the source even if next() never
  // ran, or the connection it holds would never be given back.
  const iterator: AsyncIterator<readonly Item[]> = {
    next: async () => {
      const page = read.shift();
      return page === undefined ? source.next() : { done: false, value: page };
    },
    return: async () => {
      read.length = 0;
      await source.return?.();
      return { done: true, value: undefined };
    },
  };
  return { [Symbol.asyncIterator]: () => iterator };
}
