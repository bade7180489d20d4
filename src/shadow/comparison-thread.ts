/**
 * The comparison worker's thread (started by threaded-comparer.ts): jobs arrive in batches, each is
 * sent to the legacy service and judged against our answer here, and the verdicts go back in
 * batches too, one message per turn of this thread's event loop rather than one per exchange.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { AcceptRule } from './accepted.js';
import type { ComparisonJob } from './comparison.js';
import type { Verdict } from './in-process-comparer.js';
import { InProcessComparer } from './in-process-comparer.js';
import type { JudgeRules } from './judgement.js';
import type { LegacyClientOptions } from './legacy-client.js';
import { LegacyClient } from './legacy-client.js';

export interface WorkerSettings {
  readonly legacyUrl: string;
  readonly client: LegacyClientOptions;
  /** As judgeRules built them (judgement.ts); the accepted differences arrive as they change. */
  readonly rules: JudgeRules;
}

/** Jobs, or the accepted differences from now on. */
export type JobMessage =
  readonly { readonly id: number; readonly job: ComparisonJob }[] | { readonly rules: readonly AcceptRule[] };
/** Verdicts, or `ready` once, when this thread has loaded and takes jobs. */
export type VerdictMessage = readonly { readonly id: number; readonly verdict: Verdict }[] | 'ready';

const port = parentPort;
if (port === null) throw new Error('comparison-thread.js runs as a worker thread (see threaded-comparer.ts)');
const settings = workerData as WorkerSettings;
const comparer = new InProcessComparer(new LegacyClient(settings.legacyUrl, settings.client), settings.rules);

const SKIPPED: Verdict = { judgement: { result: 'skipped', kind: null, example: null }, seconds: 0 };

let verdicts: { id: number; verdict: Verdict }[] = [];
const send = (): void => {
  const batch = verdicts;
  verdicts = [];
  port.postMessage(batch satisfies VerdictMessage);
};

port.on('message', (message: JobMessage) => {
  if ('rules' in message) return comparer.setRules(message.rules);
  for (const { id, job } of message) {
    void comparer
      .compare(revive(job))
      // A comparison that fails (a bug of ours) is skipped and told, not the end of this thread.
      .catch((err: unknown): Verdict => ({ ...SKIPPED, error: err instanceof Error ? err.message : String(err) }))
      .then((verdict) => {
        if (verdicts.push({ id, verdict }) === 1) setImmediate(send);
      });
  }
});

port.postMessage('ready' satisfies VerdictMessage);

/** A Buffer crosses threads as a plain Uint8Array: made a Buffer again (no copy). */
function revive(job: ComparisonJob): ComparisonJob {
  const { forward, ours } = job;
  return {
    ...job,
    forward: { ...forward, body: forward.body === null ? null : asBuffer(forward.body) },
    ours: ours === null ? null : { ...ours, body: asBuffer(ours.body) },
  };
}

function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
