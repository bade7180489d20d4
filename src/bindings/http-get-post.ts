import { HttpBindingError } from '../errors/errors.js';
import { parseMediaType } from './content-type.js';
import type { Operation } from '../operations/index.js';
import { escapeHtml } from '../xml/escape.js';
import { bindHttpArgs, readUrlEncoded } from './http-params.js';
import type { Call } from './types.js';

/** HTTP GET: parameters come from the query string only. */
export function readHttpGet(op: Operation, query: string, maxFields: number): Call {
  return bindHttpArgs(op, readUrlEncoded(op, query, maxFields));
}

/**
 * HTTP POST: parameters come from an application/x-www-form-urlencoded body only; the query
 * string is ignored. An operation without parameters reads nothing, so any content type works.
 */
export function readHttpPost(op: Operation, contentType: string | undefined, body: Buffer, maxFields: number): Call {
  if (op.params.length === 0) return bindHttpArgs(op, new Map());
  if (parseMediaType(contentType).base !== 'application/x-www-form-urlencoded') {
    throw new HttpBindingError(`Request format is invalid: ${escapeHtml(contentType ?? '')}.`);
  }
  return bindHttpArgs(op, readUrlEncoded(op, body.toString('utf8'), maxFields));
}
