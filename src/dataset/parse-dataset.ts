/** A whole JSON dataset file read in memory (tests, small files), checked as the store checks it. */
import { checkDataset, DatasetError, Problems } from '../store/import/dataset-check.js';
import type { Dataset } from '../store/store.js';
import { JsonSyntaxError, parseJsonText, TextPosition } from './json-text.js';

/** Parses a dataset file's text (UTF-8 already decoded); `source` names the file in the message. */
export function parseDataset(text: string, source?: string): Dataset {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  let parsed;
  try {
    parsed = parseJsonText(body);
  } catch (error) {
    if (error instanceof JsonSyntaxError) throw new DatasetError([error.message], 1, source);
    throw error;
  }
  const problems = new Problems();
  const position = new TextPosition(body);
  for (const d of parsed.duplicateMembers) {
    problems.add(() => `${position.describe(d.offset)}: member ${JSON.stringify(d.name)} appears twice in one object`);
  }
  return checkDataset(parsed.value, problems, source);
}
