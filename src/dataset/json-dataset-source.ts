/** A JSON dataset file as an import source: the streamed reader of json-stream.ts, record by record. */
import type { ImportItem, ImportSource } from '../store/import/import-items.js';
import { TABLE_NAMES } from '../store/import/record-check.js';
import { JsonDatasetReader } from './json-stream.js';

/**
 * `tables` (what --replace empties) is read once the file is: students and devices always, as a
 * dataset is about them; marks and push only when the file has those members, so a file without
 * them leaves the stored marks and push settings alone.
 */
export function jsonDatasetSource(text: AsyncIterable<string>): ImportSource {
  const reader = new JsonDatasetReader();
  return {
    items: readJsonDataset(text, reader),
    get tables() {
      return TABLE_NAMES.filter((t) => t === 'students' || t === 'devices' || reader.members.has(t));
    },
    labelled: true,
  };
}

export async function* readJsonDataset(
  text: AsyncIterable<string>,
  reader = new JsonDatasetReader(),
): AsyncGenerator<ImportItem[]> {
  for await (const chunk of text) {
    reader.push(chunk);
    yield reader.drain();
    if (reader.finished) return;
  }
  reader.end();
  yield reader.drain();
}
