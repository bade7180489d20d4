/**
 * A provider's callback parameters, however it sends them: the query of a GET, a form POST, or a
 * JSON object of text values (Vonage and Unifonic may send any of these, as their consoles choose).
 * Each parameter once, as a text: a name given twice (in the query and the body, twice in either,
 * twice in a JSON object) or a value that is not one (null, a list, an object) is refused, since
 * a signature over "the parameters" would not say which was signed.
 */
import type { Callback } from './gateway.js';

/** A JSON object's member names as written (`"name":`), duplicates included: its values are texts, numbers or booleans. */
const JSON_NAME = /"(?:[^"\\]|\\.)*"\s*:/g;

/** The parameters, or what is wrong with them. */
export function callbackParams(callback: Callback): Map<string, string> | string {
  const params = new Map<string, string>();
  const add = (k: string, v: string): string | null => {
    if (params.has(k)) return `${JSON.stringify(k)} given twice: expected each parameter once`;
    params.set(k, v);
    return null;
  };
  for (const [k, v] of new URL(callback.url, 'http://callback').searchParams) {
    const problem = add(k, v);
    if (problem !== null) return problem;
  }
  if (callback.method === 'GET' || callback.body.length === 0) return params;
  const type = String(callback.headers['content-type'] ?? '').toLowerCase();
  const text = callback.body.toString('utf8');
  if (!type.startsWith('application/json')) {
    for (const [k, v] of new URLSearchParams(text)) {
      const problem = add(k, v);
      if (problem !== null) return problem;
    }
    return params;
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return 'expected a form, a query or a JSON object';
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return 'expected a form, a query or a JSON object';
  const entries = Object.entries(value as Record<string, unknown>);
  for (const [k, v] of entries) {
    if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean')
      return `${JSON.stringify(k)}: expected a text, a number or true/false`;
    const problem = add(k, String(v));
    if (problem !== null) return problem;
  }
  // JSON.parse keeps the last of a name given twice: count the names as written.
  if ((text.match(JSON_NAME) ?? []).length !== entries.length)
    return 'a name given twice: expected each parameter once';
  return params;
}
