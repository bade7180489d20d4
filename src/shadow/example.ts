/**
 * A kept difference's example: the request and both answers as text, bodies cut to a size a
 * report can show, credentials dropped and personal data masked by what the binding read (mask.ts).
 */
import type { ShadowAnswer, ShadowExample, ShadowPath } from '../store/shadow-types.js';
import type { Captured } from './capture.js';
import { keptHeaders, maskPersonal } from './mask.js';
import type { Personal } from './mask.js';

/** Characters of a body kept in an example: the differing paths say where, this shows the context. */
const MAX_BODY_CHARS = 65_536;

export interface ExampleRequest {
  readonly method: string;
  readonly url: string;
  readonly rawHeaders: readonly string[];
  readonly body: Buffer | null;
}

export function buildExample(
  request: ExampleRequest,
  legacy: Captured,
  ours: Captured,
  paths: readonly ShadowPath[],
  personal: Personal | null,
): ShadowExample {
  const mask = personal === null ? (s: string) => s : (s: string) => maskPersonal(s, personal);
  const maskOrNull = (s: string | null): string | null => (s === null ? null : mask(s));
  return {
    request: {
      method: request.method,
      path: mask(request.url),
      headers: keptHeaders(request.rawHeaders),
      body: mask(cut(request.body?.toString('utf8') ?? '')),
    },
    legacy: answer(legacy, mask),
    ours: answer(ours, mask),
    paths: paths.map((p) => ({ path: p.path, legacy: maskOrNull(p.legacy), ours: maskOrNull(p.ours) })),
  };
}

function answer(captured: Captured, mask: (s: string) => string): ShadowAnswer {
  return {
    status: captured.status,
    contentType: captured.contentType,
    body: mask(cut(captured.body.toString('utf8'))),
  };
}

function cut(text: string): string {
  return text.length <= MAX_BODY_CHARS ? text : `${text.slice(0, MAX_BODY_CHARS)}… (${text.length} characters)`;
}
