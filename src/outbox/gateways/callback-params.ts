/**
 * A provider's callback parameters, however it sends them: the query of a GET, a form POST, or a
 * JSON object of text values (Vonage and Unifonic may send any of these, as their consoles choose).
 */
import type { Callback } from './gateway.js';

/** The parameters, or null when the body is neither a form nor a flat JSON object. */
export function callbackParams(callback: Callback): Map<string, string> | null {
  const params = new Map(new URL(callback.url, 'http://callback').searchParams);
  if (callback.method === 'GET' || callback.body.length === 0) return params;
  const type = String(callback.headers['content-type'] ?? '').toLowerCase();
  const text = callback.body.toString('utf8');
  if (type.startsWith('application/json')) {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return null;
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') params.set(k, String(v));
      else if (v !== null) return null;
    }
    return params;
  }
  for (const [k, v] of new URLSearchParams(text)) params.set(k, v);
  return params;
}
