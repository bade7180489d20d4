/**
 * The soak's service instances: each the built service as `npm start` runs it (`node
 * scripts/start.js serve`, so whatever flags that start gives the runtime are the ones measured),
 * its own process on its own port, its log lines in a file. Each is watched once a second: its
 * resident memory (the process and any children it starts, from /proc) and, from its /metrics,
 * the reads it answered stale. A restart is SIGTERM (a graceful stop), then a start on the same
 * port; what the stopped process counted is kept.
 */
import { closeSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { REPO_ROOT, freePort, startChild } from '../load/processes.js';
import type { Child } from '../load/processes.js';

/** Resident bytes of `pid` and every process below it (a supervisor's workers), from /proc. */
export function treeRss(pid: number): number {
  let rss = 0;
  try {
    rss = Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;
    for (const task of readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/))
      if (task !== '') rss += treeRss(Number(task));
  } catch {
    // gone
  }
  return rss;
}

/** A counter's value in Prometheus text, summed over its label sets; null when absent. */
function counter(text: string, name: string): number | null {
  let sum: number | null = null;
  for (const line of text.split('\n'))
    if (line.startsWith(`${name} `) || line.startsWith(`${name}{`)) sum = (sum ?? 0) + Number(line.split(' ').at(-1));
  return sum;
}

export interface MemoryFacts {
  /** RSS a few seconds after the first start, the highest seen, the last seen (bytes). */
  start: number;
  peak: number;
  end: number;
}

export class Instance {
  #child: Child | null = null;
  #log = -1;
  #watch: NodeJS.Timeout | null = null;
  readonly memory: MemoryFacts = { start: 0, peak: 0, end: 0 };
  /** Stale answers counted by processes already stopped, and by the one running. */
  #staleBefore = 0;
  #staleNow = 0;
  #samples = 0;
  restarts = 0;

  private constructor(
    readonly name: string,
    readonly port: number,
    private readonly env: NodeJS.ProcessEnv,
    private readonly logFile: string,
  ) {}

  static async create(name: string, dir: string, env: NodeJS.ProcessEnv): Promise<Instance> {
    const instance = new Instance(name, await freePort(), env, join(dir, `${name}.log`));
    await instance.start();
    return instance;
  }

  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  get staleServed(): number {
    return this.#staleBefore + this.#staleNow;
  }

  async start(): Promise<void> {
    this.#log = openSync(this.logFile, 'a');
    const env = { ...this.env, PORT: String(this.port), HOST: '127.0.0.1' };
    const child = startChild(
      this.name,
      { file: process.execPath, args: [join(REPO_ROOT, 'scripts/start.js'), 'serve'] },
      env,
      this.#log,
    );
    this.#child = child;
    const until = Date.now() + 60_000;
    for (;;) {
      if (child.proc.exitCode !== null) throw new Error(`${this.name} exited at start: ${child.stderr().trim()}`);
      const up = await fetch(`http://${this.address}/healthz`).then(
        async (r) => (await r.arrayBuffer(), true),
        () => false,
      );
      if (up) break;
      if (Date.now() > until) throw new Error(`${this.name} did not answer within 60 s: ${child.stderr().trim()}`);
      await sleep(100);
    }
    this.#staleNow = 0;
    this.#watch = setInterval(() => void this.#sample(child), 1000);
  }

  async stop(): Promise<void> {
    if (this.#watch !== null) clearInterval(this.#watch);
    this.#watch = null;
    const child = this.#child;
    this.#child = null;
    if (child !== null) {
      await this.#scrape();
      await child.stop();
    }
    this.#staleBefore += this.#staleNow;
    this.#staleNow = 0;
    if (this.#log >= 0) closeSync(this.#log);
    this.#log = -1;
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.start();
    this.restarts++;
  }

  /** The last figures before the end: memory and the stale count. */
  async finish(): Promise<void> {
    if (this.#child !== null) {
      this.memory.end = treeRss(this.#child.pid);
      await this.#scrape();
    }
  }

  /** Lines the instance logged at error level or above. */
  errorLines(): number {
    try {
      return readFileSync(this.logFile, 'utf8')
        .split('\n')
        .filter((l) => /"level":(5|6)\d/.test(l)).length;
    } catch {
      return 0;
    }
  }

  async #sample(child: Child): Promise<void> {
    const rss = treeRss(child.pid);
    if (rss === 0) return;
    this.#samples++;
    // The start figure: 5 s in (the first requests answered, the modules loaded).
    if (this.#samples === 5 && this.restarts === 0) this.memory.start = rss;
    this.memory.peak = Math.max(this.memory.peak, rss);
    this.memory.end = rss;
    if (this.#samples % 5 === 0) await this.#scrape();
  }

  async #scrape(): Promise<void> {
    try {
      const res = await fetch(`http://${this.address}/metrics`, { signal: AbortSignal.timeout(3000) });
      const value = counter(await res.text(), 'sis_answers_stale_total');
      if (value !== null) this.#staleNow = value;
    } catch {
      // stopping or busy: the next scrape counts it
    }
  }
}
