/** What the orchestrator asks of one load run, and what the load worker reports back. */

export type LoadGenerator = 'autocannon' | 'wrk';

export interface LoadSpec {
  readonly generator: LoadGenerator;
  readonly url: string;
  readonly method: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string;
  readonly connections: number;
  /** Seconds (wrk takes whole seconds: rounded up). */
  readonly duration: number;
  /** Every answer's status must be 2xx and its body equal this; off when absent. */
  readonly expectBody?: string;
}

export interface LoadResult {
  readonly responses: number;
  readonly seconds: number;
  readonly rps: number;
  /** Milliseconds. */
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  readonly non2xx: number;
  readonly errors: number;
  readonly timeouts: number;
  readonly mismatches: number;
  /** Share of one core the load generator used during the run. */
  readonly cpu: number;
  /** CPU seconds of the whole worker process and its children, start-up included. */
  readonly cpuTotal: number;
  readonly bytes: number;
}
