/**
 * What the hostile input tests share (test/wire/hostile-*.test.ts): a real server started before a
 * suite's tests and closed after them, a SOAP 1.1 call to it over a socket, and the check that it
 * still serves the next request.
 */
import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import { rawRequest } from './raw-http.js';
import type { RawResponse } from './raw-http.js';
import { startTestServer } from './test-server.js';
import type { TestServer } from './test-server.js';

const dataset = { devices: [{ id: '1', token: 'tok-AAA-111' }] };
const SOAP11 = [
  ['Content-Type', 'text/xml; charset=utf-8'],
  ['SOAPAction', '"http://tempuri.org/GetTokenDevice"'],
] as const;

export const envelope = (inner: string, prolog = ''): string =>
  `<?xml version="1.0" encoding="utf-8"?>${prolog}<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body><GetTokenDevice xmlns="http://tempuri.org/">${inner}</GetTokenDevice></soap:Body></soap:Envelope>`;

export interface HostileServer {
  /** The server of the suite (its URL read once `before` has run). */
  readonly server: { readonly url: string };
  /** POSTs `body` to the SOAP path, with SOAP 1.1 headers unless others are given. */
  soap(body: string | Buffer, headers?: ReadonlyArray<readonly [string, string]>): Promise<RawResponse>;
  /** The server still answers a plain call correctly. */
  stillServes(): Promise<void>;
}

/** Called inside a describe: starts the suite's server before its tests and closes it after them. */
export function hostileServer(): HostileServer {
  let started: TestServer | undefined;
  before(async () => {
    started = await startTestServer({
      dataset,
      env: { SIS_REQUEST_TIMEOUT_MS: '1500', SIS_HEADERS_TIMEOUT_MS: '1000' },
    });
  });
  after(() => started?.close());

  const server = {
    get url(): string {
      if (started === undefined) throw new Error('the hostile input server is not started');
      return started.url;
    },
  };

  const soap = (
    body: string | Buffer,
    headers: ReadonlyArray<readonly [string, string]> = SOAP11,
  ): Promise<RawResponse> =>
    rawRequest(server.url, { method: 'POST', path: '/PushNotificationMobile.asmx', headers, body });

  async function stillServes(): Promise<void> {
    const res = await rawRequest(server.url, {
      method: 'GET',
      path: '/PushNotificationMobile.asmx/GetTokenDevice?id=1',
    });
    assert.equal(res.status, 200);
    assert.match(res.body.toString(), /tok-AAA-111/);
  }

  return { server, soap, stillServes };
}
