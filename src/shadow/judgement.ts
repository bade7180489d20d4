/**
 * What one compared exchange comes to, decided from the legacy service's result and our captured
 * answer: pure, so it runs wherever the legacy's answer arrives (this thread in legacy mode, the
 * comparison worker in compare mode) and only the verdict travels back.
 */
import type { ShadowExample, ShadowResult } from '../store/shadow-types.js';
import type { Captured } from './capture.js';
import { compareAnswers } from './answer-diff.js';
import type { ExampleRequest } from './example.js';
import { buildExample } from './example.js';
import type { LegacyAnswer, LegacyResult } from './legacy-client.js';

export interface Judgement {
  readonly result: ShadowResult;
  /** For `different`: the kind of difference and an example of it (masked where `personal`). */
  readonly kind: string | null;
  readonly example: ShadowExample | null;
}

export interface JudgedExchange {
  readonly request: ExampleRequest;
  /** Null when ours could not be captured (too large, cut short): the exchange is skipped. */
  readonly ours: Captured | null;
  /** WSDL, disco or a help page: the service's own address is set aside. */
  readonly metadata: boolean;
  /** A service file that writes (AuthCode): phones and codes are masked in the example. */
  readonly personal: boolean;
}

export function judge(result: LegacyResult, exchange: JudgedExchange): Judgement {
  const { ours } = exchange;
  if (!result.ok) return { result: 'legacy-failed', kind: null, example: null };
  if (ours === null) return { result: 'skipped', kind: null, example: null };
  const legacy = capturedOf(result.answer);
  const comparison = compareAnswers(legacy, ours, exchange.metadata);
  if (comparison.result !== 'different') return { result: comparison.result, kind: null, example: null };
  const example = buildExample(exchange.request, legacy, ours, comparison.paths, exchange.personal);
  return { result: 'different', kind: comparison.kind, example };
}

export function capturedOf(answer: LegacyAnswer): Captured {
  return {
    status: answer.status,
    contentType: answer.headers.get('content-type') ?? null,
    cacheControl: answer.headers.get('cache-control') ?? null,
    body: answer.body,
  };
}
