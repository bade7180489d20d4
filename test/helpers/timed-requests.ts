/**
 * Requests to a running service with the time each took and a time-out of their own, for the
 * tests that put the database in trouble under load (a restart, a partition) and bound every answer.
 */

/** The documented server fault's text (HTTP GET and POST bindings). */
export const FAULT = /^The service could not complete the request\. The error has been logged\.\r\n$/;

export interface Answer {
  readonly status: number;
  readonly body: string;
  readonly ms: number;
}

/** `path` asked of `base`, given up (thrown) after `timeoutMs`. */
export async function ask(base: string, path: string, timeoutMs: number, init: RequestInit = {}): Promise<Answer> {
  const started = performance.now();
  const res = await fetch(base + path, { ...init, signal: AbortSignal.timeout(timeoutMs) });
  const body = await res.text();
  return { status: res.status, body, ms: performance.now() - started };
}

/** An AuthCode for `phone` over HTTP POST. */
export const authCode = (base: string, phone: string, timeoutMs: number): Promise<Answer> =>
  ask(base, '/AuthCodeSending.asmx/AuthCode', timeoutMs, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: `code=4321&phone=${encodeURIComponent(phone)}`,
  });
