/** What a scenario is, which targets it runs against, and where each target is asked. */

/**
 * `ours` runs as `npm start` does (logging at info, JSON lines to stdout, here a file);
 * `ours-silent` is the same with LOG_LEVEL=silent, for what the access log costs; `necessary`
 * does only the work a scenario's answer needs (targets/necessary-server.ts).
 */
export type TargetName = 'ceiling' | 'necessary' | 'node-soap' | 'ours' | 'ours-silent';
export const TARGETS: readonly TargetName[] = ['ceiling', 'necessary', 'node-soap', 'ours', 'ours-silent'];

/** Ours in either configuration: the same answers, the same paths. */
export const isOurs = (t: TargetName): boolean => t === 'ours' || t === 'ours-silent';

export interface BenchRequest {
  readonly method: 'GET' | 'POST';
  /** The path at our service (ASMX's); node-soap and the ceiling get their own, see pathFor. */
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string;
}

export interface Expected {
  readonly status: number;
  readonly contentType: string;
  readonly body: string;
}

/** What node-soap's answer must hold: its bytes differ (prefixes, escaping), its values may not. */
export interface PeerExpectation {
  /** Values, in order, after entity decoding. */
  readonly values: readonly string[];
  /** How many `<StudentInfo>` elements, when a list is answered. */
  readonly items?: number;
}

/**
 * The work a scenario's answer cannot do without, for the necessary-work server: which
 * operation, where its parameters are, and (SOAP) the envelope's namespace.
 */
export interface NecessaryWork {
  readonly op: 'token' | 'school' | 'authcode';
  readonly from: 'soap' | 'query' | 'form';
  readonly soapNs?: string;
}

export interface Scenario {
  readonly id: string;
  readonly title: string;
  readonly binding: 'SOAP 1.1' | 'SOAP 1.2' | 'HTTP GET' | 'HTTP POST';
  readonly request: BenchRequest;
  readonly expected: Expected;
  /** Path at node-soap; absent when node-soap cannot serve the binding. */
  readonly peerPath?: string;
  readonly peer?: PeerExpectation;
  /** The operation writes (AuthCode): the ceiling answers without writing anything. */
  readonly writes?: boolean;
  /** Absent where the necessary-work server has no counterpart (the growth check). */
  readonly necessary?: NecessaryWork;
}

/** Which optional targets a run has: ours with LOG_LEVEL=silent, the necessary-work server. */
export interface TargetChoice {
  readonly silent: boolean;
  readonly necessary: boolean;
}

/** The targets a scenario runs against: node-soap only where it serves the binding. */
export function targetsOf(s: Scenario, choice: TargetChoice = { silent: true, necessary: true }): TargetName[] {
  return TARGETS.filter(
    (t) =>
      (t !== 'node-soap' || s.peerPath !== undefined) &&
      (t !== 'ours-silent' || choice.silent) &&
      (t !== 'necessary' || (choice.necessary && s.necessary !== undefined)),
  );
}

/** Each target's path: ours is ASMX's; the ceiling keys its fixed answers by scenario. */
export function pathFor(s: Scenario, target: TargetName): string {
  if (target === 'ceiling') return `/ceiling/${s.id}`;
  if (target === 'necessary') {
    const q = s.request.path.indexOf('?');
    return `/necessary/${s.id}${q < 0 ? '' : s.request.path.slice(q)}`;
  }
  if (target === 'node-soap') return s.peerPath ?? s.request.path;
  return s.request.path;
}
