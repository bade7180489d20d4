/**
 * The soak's clients: an open-loop load (requests start on schedule whether or not earlier ones
 * were answered, as many independent clients would) over the four bindings, through the balancer.
 * Reads are GetTokenDevice (one device, its token checked in the answer) and GetStudentSchool (a
 * school of 1,000 students, its answer checked against the first one seen for that school and
 * binding); AuthCodes each go to a phone of their own, so the gateway's count per phone says how
 * often each code was delivered. Every request is tallied by kind, outcome and the phase of the
 * soak it started in.
 */
import { createHash } from 'node:crypto';
import { Agent, request } from 'node:http';

export type Binding = 'soap11' | 'soap12' | 'httpget' | 'httppost';
export const BINDINGS: readonly Binding[] = ['soap11', 'soap12', 'httpget', 'httppost'];
export type Kind = 'GetTokenDevice' | 'GetStudentSchool' | 'AuthCode';
/** ok: 200 with the right answer; wrong: 200 with another; fault: 500; refused: 503 (no instance); other: any other status. */
export type Outcome = 'ok' | 'wrong' | 'fault' | 'refused' | 'other' | 'timeout' | 'error';

/** A request waits at most this long (the balancer's server time-out is 60 s). */
const REQUEST_TIMEOUT_MS = 15_000;

interface Call {
  readonly kind: Kind;
  readonly service: string;
  readonly args: Readonly<Record<string, string>>;
}

/** The device tokens scripts/generate-dataset.js writes: `d<i>` has this one. */
export const tokenOf = (i: number): string => `tok-${((i * 2654435761) >>> 0).toString(16).padStart(8, '0')}-${i}`;
export const schoolOf = (i: number): string => `http://school-${String(i).padStart(4, '0')}.example`;

function wire(
  binding: Binding,
  call: Call,
): { method: string; path: string; headers: Record<string, string>; body?: Buffer } {
  const form = new URLSearchParams(call.args).toString();
  const path = `/${call.service}.asmx`;
  if (binding === 'httpget') return { method: 'GET', path: `${path}/${call.kind}?${form}`, headers: {} };
  if (binding === 'httppost')
    return {
      method: 'POST',
      path: `${path}/${call.kind}`,
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: Buffer.from(form),
    };
  const params = Object.entries(call.args)
    .map(([k, v]) => `<${k}>${v.replace(/&/g, '&amp;').replace(/</g, '&lt;')}</${k}>`)
    .join('');
  const ns =
    binding === 'soap11' ? 'http://schemas.xmlsoap.org/soap/envelope/' : 'http://www.w3.org/2003/05/soap-envelope';
  const body = Buffer.from(
    `<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="${ns}"><soap:Body><${call.kind} xmlns="http://tempuri.org/">${params}</${call.kind}></soap:Body></soap:Envelope>`,
  );
  const headers: Record<string, string> =
    binding === 'soap11'
      ? { 'Content-Type': 'text/xml; charset=utf-8', SOAPAction: `"http://tempuri.org/${call.kind}"` }
      : { 'Content-Type': `application/soap+xml; charset=utf-8; action="http://tempuri.org/${call.kind}"` };
  return { method: 'POST', path, headers, body };
}

export interface TrafficOptions {
  readonly url: string;
  readonly readsPerSecond: number;
  readonly codesPerSecond: number;
  readonly devices: number;
  readonly schools: number;
  /** The soak's phase now, for the tallies. */
  readonly phase: () => string;
}

export interface Tally {
  /** `kind outcome` → count. */
  readonly outcomes: Map<string, number>;
  /** `kind outcome phase` → count, failures only. */
  readonly failures: Map<string, number>;
  /** Answer times in ms by kind. */
  readonly times: Map<Kind, number[]>;
  /** Phones of AuthCodes answered 200, and of those answered otherwise. */
  readonly accepted: string[];
  readonly notAccepted: string[];
  /** Requests not sent because too many were still waiting. */
  skipped: number;
}

const MAX_IN_FLIGHT = 1000;

export class Traffic {
  readonly tally: Tally = {
    outcomes: new Map(),
    failures: new Map(),
    times: new Map(),
    accepted: [],
    notAccepted: [],
    skipped: 0,
  };
  readonly #agent = new Agent({ keepAlive: true, maxSockets: 256 });
  readonly #pending = new Set<Promise<void>>();
  /** The first 200 answer's hash per school and binding. */
  readonly #lists = new Map<string, string>();
  #timer: NodeJS.Timeout | null = null;
  #n = 0;
  #phones = 0;

  constructor(private readonly opts: TrafficOptions) {}

  start(): void {
    // Ticks of 50 ms; each sends what the rates owe by now (so a late tick catches up).
    const started = Date.now();
    let reads = 0;
    let codes = 0;
    this.#timer = setInterval(() => {
      const s = (Date.now() - started) / 1000;
      while (reads < s * this.opts.readsPerSecond) this.#send(this.#read(reads++));
      while (codes < s * this.opts.codesPerSecond) {
        codes++;
        this.#send(this.#code());
      }
    }, 50);
  }

  /** Stops sending and waits for every request still out (each has its time-out). */
  async stop(): Promise<void> {
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#timer = null;
    while (this.#pending.size > 0) await Promise.all([...this.#pending]);
    this.#agent.destroy();
  }

  #read(i: number): { call: Call; check: (binding: Binding, body: Buffer) => boolean } {
    if (i % 4 !== 3) {
      // Four reads in five ask for one of 100 devices (asked often: each instance has their
      // answers to serve stale), the fifth for any of them.
      const d = i % 5 === 0 ? (i * 7919) % this.opts.devices : (i * 7919) % 100;
      const token = tokenOf(d);
      return {
        call: { kind: 'GetTokenDevice', service: 'PushNotificationMobile', args: { id: `d${d}` } },
        check: (_b, body) => body.includes(token),
      };
    }
    const school = schoolOf(i % this.opts.schools);
    return {
      call: {
        kind: 'GetStudentSchool',
        service: 'NotificationNotes',
        args: { school_base_url: school, show_active: '1' },
      },
      check: (binding, body) => {
        const key = `${school} ${binding}`;
        const hash = createHash('sha1').update(body).digest('hex');
        const first = this.#lists.get(key);
        if (first === undefined) this.#lists.set(key, hash);
        return first === undefined || first === hash;
      },
    };
  }

  #code(): { call: Call; phone: string } {
    // A phone of its own per code: Saudi mobiles (+966 5x), numbered, never repeated in a run.
    const n = this.#phones++;
    const prefixes = ['50', '53', '54', '55', '56', '58', '59'];
    const phone = `+966${prefixes[n % prefixes.length]}${String(Math.floor(n / prefixes.length) + 1_000_000).slice(-7)}`;
    return {
      call: { kind: 'AuthCode', service: 'AuthCodeSending', args: { code: String(100_000 + (n % 900_000)), phone } },
      phone,
    };
  }

  #send(what: { call: Call; check?: (binding: Binding, body: Buffer) => boolean; phone?: string }): void {
    if (this.#pending.size >= MAX_IN_FLIGHT) {
      this.tally.skipped++;
      return;
    }
    const binding = BINDINGS[this.#n++ % BINDINGS.length]!;
    const phase = this.opts.phase();
    const started = Date.now();
    const done = this.#exchange(binding, what.call).then(({ status, body }) => {
      const ms = Date.now() - started;
      const outcome: Outcome =
        typeof status === 'string'
          ? status
          : status === 200
            ? (what.check?.(binding, body) ?? true)
              ? 'ok'
              : 'wrong'
            : status === 500
              ? 'fault'
              : status === 503
                ? 'refused'
                : 'other';
      this.#count(what.call.kind, outcome, phase, ms);
      if (what.phone !== undefined) (outcome === 'ok' ? this.tally.accepted : this.tally.notAccepted).push(what.phone);
    });
    this.#pending.add(done);
    void done.finally(() => this.#pending.delete(done));
  }

  #count(kind: Kind, outcome: Outcome, phase: string, ms: number): void {
    const add = (map: Map<string, number>, key: string): void => void map.set(key, (map.get(key) ?? 0) + 1);
    add(this.tally.outcomes, `${kind} ${outcome}`);
    if (outcome !== 'ok') add(this.tally.failures, `${kind} ${outcome}, ${phase}`);
    let times = this.tally.times.get(kind);
    if (times === undefined) this.tally.times.set(kind, (times = []));
    times.push(ms);
  }

  #exchange(binding: Binding, call: Call): Promise<{ status: number | 'timeout' | 'error'; body: Buffer }> {
    const req = wire(binding, call);
    const url = new URL(this.opts.url);
    return new Promise((resolve) => {
      const r = request(
        {
          host: url.hostname,
          port: url.port,
          method: req.method,
          path: req.path,
          headers: { ...req.headers, ...(req.body === undefined ? {} : { 'Content-Length': String(req.body.length) }) },
          agent: this.#agent,
          timeout: REQUEST_TIMEOUT_MS,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
          res.on('error', () => resolve({ status: 'error', body: Buffer.alloc(0) }));
        },
      );
      r.on('timeout', () => {
        r.destroy();
        resolve({ status: 'timeout', body: Buffer.alloc(0) });
      });
      r.on('error', () => resolve({ status: 'error', body: Buffer.alloc(0) }));
      r.end(req.body);
    });
  }
}
