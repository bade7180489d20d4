/**
 * `sis shadow replay` (docs/migrating.md): the kept example of each kind of difference sent again,
 * now, to the legacy service (SIS_LEGACY_URL) and to ours (computed in this process over the same
 * database, writes validated only), and judged as the service judges: whether the kind is still
 * `different` or gone (identical, equivalent, accepted, noisy) — proof that a fix or an import
 * closed it without waiting for the traffic to come back. Writes are never replayed.
 */
import { Dispatcher } from '../bindings/dispatch.js';
import { MetadataEndpoint } from '../bindings/metadata-endpoint.js';
import { parseTarget } from '../bindings/request-target.js';
import { operationOf } from '../bindings/route.js';
import type { Exchange } from '../bindings/types.js';
import { authCodePolicyOf } from '../config/config.js';
import type { Config } from '../config/config.js';
import { groupServices } from '../contract/define.js';
import { operationsFor } from '../operations/index.js';
import type { ShadowExample, ShadowResult } from '../store/shadow-types.js';
import type { ServiceStore } from '../store/store.js';
import { compileRules } from './accepted.js';
import { captureReply } from './capture.js';
import { compareWithLegacy } from './comparison.js';
import { dryRunContext } from './dry-run.js';
import { judgeRules } from './judgement.js';
import { LegacyClient } from './legacy-client.js';

export interface ReplayedKind {
  readonly service: string | null;
  readonly operation: string | null;
  readonly binding: string;
  readonly kind: string;
  /** `different`: still there; `gone`: the answers now agree (or differ only where accepted or noisy). */
  readonly now: 'different' | 'gone' | 'not-replayed';
  /** The result the replay came to (null when not replayed: a write, or no example kept). */
  readonly result: ShadowResult | null;
  /** Why it was not replayed, or the paths still differing. */
  readonly note: string | null;
}

export interface ReplayFilter {
  readonly since: Date;
  readonly kind: string | null;
}

/** Replays each kind's example (one at a time: the legacy is a production service). */
export async function replayKinds(config: Config, store: ServiceStore, filter: ReplayFilter): Promise<ReplayedKind[]> {
  const settings = config.shadow;
  if (settings.legacyUrl === null) throw new Error('SIS_LEGACY_URL is not set: replay needs the legacy service');
  const services = groupServices(operationsFor(config.results));
  const context = dryRunContext({ store, now: () => new Date(), authCodes: authCodePolicyOf(config) }, () => undefined);
  const ours = new Dispatcher(
    services,
    { ...config, answerCacheBytes: 0 },
    context,
    new MetadataEndpoint(config.namespace),
  );
  const legacy = new LegacyClient(settings.legacyUrl, {
    timeoutMs: settings.timeoutMs,
    maxAnswerBytes: settings.maxAnswerBytes,
    maxSockets: 1,
  });
  const rules = judgeRules(settings, services, compileRules(await store.shadow.rules()));
  const out: ReplayedKind[] = [];
  try {
    for (const kept of await store.shadow.examples(filter.since)) {
      if (filter.kind !== null && kept.kind !== filter.kind) continue;
      const labels = { service: kept.service, operation: kept.operation, binding: kept.binding };
      const base = { ...labels, kind: kept.kind };
      const ex = new ReplayExchange(kept.example, config.basePath);
      const route = ours.route(ex);
      // Read as the service reads it: a request whose operation writes, or is not known, is never sent twice.
      const read = route?.kind === 'call' ? await ours.read(ex, route) : null;
      const operation = route === null || read === null ? null : operationOf(route, read);
      if (route === null || (read !== null && (operation === null || operation.writes === true))) {
        out.push({ ...base, now: 'not-replayed', result: null, note: 'a write: never sent twice' });
        continue;
      }
      const outcome = await (read === null ? ours.dispatchRoute(ex, route) : ours.answerRead(ex, route, read));
      const captured = await captureReply(outcome.reply, settings.maxAnswerBytes).catch(() => null);
      const forward = {
        method: ex.method,
        relativeUrl: ex.url.startsWith(config.basePath) ? ex.url.slice(config.basePath.length) : ex.url,
        rawHeaders: ex.rawHeaders,
        body: ex.body,
        clientAddress: undefined,
        write: false,
        copy: true,
      };
      const job = {
        labels,
        forward,
        url: ex.url,
        ours: captured,
        metadata: kept.binding === 'metadata',
        // Kept examples were masked when kept.
        personal: null,
      };
      const { judgement: judged } = await compareWithLegacy(job, rules, (f) => legacy.send(f));
      const now = judged.result === 'different' ? 'different' : isGone(judged.result) ? 'gone' : 'not-replayed';
      const note =
        judged.result === 'different'
          ? (judged.example?.paths.map((p) => p.path).join(', ') ?? null)
          : now === 'not-replayed'
            ? `the replay was ${judged.result}`
            : null;
      out.push({ ...base, now, result: judged.result, note });
    }
  } finally {
    legacy.close();
  }
  return out;
}

const isGone = (result: ShadowResult): boolean =>
  result === 'identical' || result === 'equivalent' || result === 'accepted' || result === 'noisy';

/** A kept example's request as the dispatcher takes it: as the client sent it, credentials left out. */
class ReplayExchange implements Exchange {
  readonly method: string;
  readonly url: string;
  readonly target;
  readonly body: Buffer | null;
  readonly rawHeaders: string[];
  readonly isLocal = false;
  readonly clientAddress = '';
  readonly client = '';
  readonly site = null;
  /** A replay starts no trace of its own, and never sends an SMS (writes are not replayed). */
  readonly onwardTraceparent = undefined;
  readonly #headers = new Map<string, string>();

  constructor(example: ShadowExample, basePath: string) {
    this.method = example.request.method;
    this.url = example.request.path;
    this.target = parseTarget(this.url, basePath);
    this.body = example.request.body === '' ? null : Buffer.from(example.request.body, 'utf8');
    this.rawHeaders = example.request.headers.flatMap(([name, value]) => [name, value]);
    for (const [name, value] of example.request.headers) this.#headers.set(name.toLowerCase(), value);
  }

  header(name: string): string | undefined {
    return this.#headers.get(name);
  }

  readBody(): Buffer {
    return this.body ?? Buffer.alloc(0);
  }

  origin(): string {
    return `http://${this.#headers.get('host') ?? 'localhost'}`;
  }
}
