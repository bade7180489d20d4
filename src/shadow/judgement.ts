/**
 * What one compared exchange comes to, decided from the legacy service's result and our captured
 * answer: pure, so it runs wherever the legacy's answer arrives (this thread in legacy mode, the
 * comparison worker in compare mode) and only the verdict travels back.
 */
import type { ShadowSettings } from '../config/config.js';
import type { Service } from '../operations/index.js';
import type { ShadowExample, ShadowResult } from '../store/shadow-types.js';
import { applyRules, shapeOf } from './accepted.js';
import type { AcceptRule, ComparisonLabels } from './accepted.js';
import { compareAnswers } from './answer-diff.js';
import type { Captured } from './capture.js';
import type { ExampleRequest } from './example.js';
import { buildExample } from './example.js';
import type { LegacyAnswer, LegacyResult } from './legacy-client.js';
import type { Personal } from './mask.js';
import type { ListPairing } from './xml-diff.js';

/**
 * What judging follows besides the answers: the accepted differences, how list items pair, the
 * recheck. Built by `judgeRules` alone, from the settings and the contract: a new comparison
 * setting is read there and nowhere else.
 */
export interface JudgeRules {
  readonly accept: readonly AcceptRule[];
  readonly lists: ListPairing;
  /** A read that compares `different` is asked of the legacy once more (SIS_SHADOW_RECHECK). */
  readonly recheck: boolean;
}

/** The judging rules of the settings and the contract, with the accepted differences of now. */
export function judgeRules(
  settings: Pick<ShadowSettings, 'listOrder' | 'recheck'>,
  services: readonly Service[],
  accept: readonly AcceptRule[] = [],
): JudgeRules {
  return { accept, lists: listPairing(services, settings.listOrder), recheck: settings.recheck };
}

/** List items are paired by the key their type declares in the contract (StructSpec.key). */
function listPairing(services: readonly Service[], order: ListPairing['order']): ListPairing {
  const keys = new Map<string, string>();
  for (const service of services)
    for (const op of service.operations)
      if (op.result.kind === 'list' && op.result.item.key !== undefined)
        keys.set(op.result.item.name, op.result.item.key);
  return { keys, order };
}

export interface Judgement {
  readonly result: ShadowResult;
  /** For `different`: the kind of difference and an example of it (masked where `personal`). */
  readonly kind: string | null;
  readonly example: ShadowExample | null;
  /** The accepted differences' rules that matched (their hits), if any. */
  readonly rules?: readonly number[];
}

export interface JudgedExchange {
  readonly labels: ComparisonLabels;
  readonly request: ExampleRequest;
  /** Null when ours could not be captured (too large, cut short): the exchange is skipped. */
  readonly ours: Captured | null;
  /** WSDL, disco or a help page: the service's own address is set aside. */
  readonly metadata: boolean;
  /** The personal data the binding read (mask.ts), masked in the example; null: none. */
  readonly personal: Personal | null;
}

/**
 * A `different` whose every path an accepted difference covers is `accepted` (no example kept);
 * one with paths left is `different`, its kind and example made of those paths only.
 */
export function judge(result: LegacyResult, exchange: JudgedExchange, rules: JudgeRules): Judgement {
  const { ours } = exchange;
  if (!result.ok) return { result: 'legacy-failed', kind: null, example: null };
  if (ours === null) return { result: 'skipped', kind: null, example: null };
  const legacy = capturedOf(result.answer);
  const comparison = compareAnswers(legacy, ours, exchange.metadata, rules.lists);
  if (comparison.result !== 'different') return { result: comparison.result, kind: null, example: null };
  const accepted = applyRules(exchange.labels, comparison.paths, rules.accept);
  const matched = accepted.matched.length === 0 ? {} : { rules: accepted.matched };
  if (accepted.kind === null) return { result: 'accepted', kind: null, example: null, ...matched };
  const example = buildExample(exchange.request, legacy, ours, accepted.paths, exchange.personal);
  return { result: 'different', kind: accepted.kind, example, ...matched };
}

/**
 * Noise told from a regression: a read judged `different` is sent to the legacy service once more
 * (`again`; never a write). When the legacy's two answers differ from each other wherever ours
 * differs from the first (its order, clock or data moving), the comparison is `noisy`: kept with
 * its kind and example, reported apart from `different`.
 */
export async function recheckNoise(
  judgement: Judgement,
  first: LegacyResult,
  exchange: JudgedExchange,
  rules: JudgeRules,
  write: boolean,
  again: () => Promise<LegacyResult>,
): Promise<Judgement> {
  if (judgement.result !== 'different' || !rules.recheck || write || !first.ok || judgement.example === null)
    return judgement;
  const second = await again();
  if (!second.ok) return judgement;
  const itself = compareAnswers(capturedOf(first.answer), capturedOf(second.answer), exchange.metadata, rules.lists);
  if (itself.result !== 'different') return judgement;
  const moving = new Set(itself.paths.map((p) => shapeOf(p.path)));
  const noisy = judgement.example.paths.every((p) => moving.has(shapeOf(p.path)));
  return noisy ? { ...judgement, result: 'noisy' } : judgement;
}

export function capturedOf(answer: LegacyAnswer): Captured {
  return {
    status: answer.status,
    contentType: answer.headers.get('content-type') ?? null,
    cacheControl: answer.headers.get('cache-control') ?? null,
    body: answer.body,
  };
}
