/**
 * The one comparison pipeline: the request sent to the legacy service (unless its answer is
 * already in hand: legacy mode's client got it), its answer judged against ours, and a read
 * judged `different` asked once more to tell noise. Compare mode's worker (through
 * InProcessComparer), legacy mode (shadow-dispatcher.ts) and `sis shadow replay` all call
 * `compareWithLegacy`; the rules it judges by come from `judgeRules` (judgement.ts).
 */
import type { ComparisonLabels } from './accepted.js';
import type { Captured } from './capture.js';
import type { Judgement, JudgeRules } from './judgement.js';
import { judge, recheckNoise } from './judgement.js';
import type { ForwardRequest, LegacyResult } from './legacy-client.js';
import type { Personal } from './mask.js';

/** One exchange to compare: plain data, so it crosses to the comparison thread as it is. */
export interface ComparisonJob {
  /** Our answer's labels (those of the metrics and the access log). */
  readonly labels: ComparisonLabels;
  /** The request as the legacy service gets it (`write`: never sent twice, so never rechecked). */
  readonly forward: ForwardRequest;
  /** The request as an example shows it (its URL as the client sent it). */
  readonly url: string;
  /** Ours; null when it could not be captured (too large, cut short): the comparison is skipped. */
  readonly ours: Captured | null;
  /** WSDL, disco or a help page: the service's own address is set aside. */
  readonly metadata: boolean;
  /** The personal data the binding read, masked in a kept example; null: none. */
  readonly personal: Personal | null;
}

export interface Compared {
  readonly judgement: Judgement;
  /** The legacy service's answer time, or time to failure (sis_shadow_legacy_seconds). */
  readonly seconds: number;
  /** The legacy's first result, as it came. */
  readonly result: LegacyResult;
}

/** Sends a request to the legacy service (LegacyClient.send); never rejects. */
export type SendToLegacy = (request: ForwardRequest) => Promise<LegacyResult>;

/**
 * Compares one exchange: `first` is the legacy's answer when the caller already has it (legacy
 * mode), else the request is sent now. Never rejects on a failure of the legacy service: that is
 * a verdict (`legacy-failed`).
 */
export async function compareWithLegacy(
  job: ComparisonJob,
  rules: JudgeRules,
  send: SendToLegacy,
  first?: LegacyResult,
): Promise<Compared> {
  const { forward } = job;
  const result = first ?? (await send(forward));
  const exchange = {
    labels: job.labels,
    request: { method: forward.method, url: job.url, rawHeaders: forward.rawHeaders, body: forward.body },
    ours: job.ours,
    metadata: job.metadata,
    personal: job.personal,
  };
  const judgement = await recheckNoise(judge(result, exchange, rules), result, exchange, rules, forward.write, () =>
    send({ ...forward, copy: true }),
  );
  return { judgement, seconds: result.ok ? result.answer.seconds : result.seconds, result };
}
