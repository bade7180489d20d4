import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { rawRequest } from '../helpers/raw-http.js';
import { fixture, goldenDataset, startTestServer } from '../helpers/test-server.js';
import type { TestServer } from '../helpers/test-server.js';

/**
 * Golden exchanges: each folder under test/golden is one request captured from a real ASMX
 * service and the answer it gave, adjusted only where BEHAVIOUR.md's decisions say we differ
 * (each adjustment is listed in the case's response.json). Compared byte for byte, bar `Date`.
 */
interface GoldenRequest {
  method: string;
  path: string;
  headers: [string, string][];
  body?: string;
}
interface GoldenResponse {
  status: number;
  contentType: string | null;
  cacheControl: string | null;
  compareBody: boolean;
  desc: string;
}

const root = fixture('golden');
const cases = readdirSync(root).filter((n) => existsSync(join(root, n, 'request.json')));

describe('golden exchanges with ASMX', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ dataset: goldenDataset() });
  });
  after(() => server.close());

  it('has cases to run', () => assert.ok(cases.length > 100, `only ${cases.length} golden cases found`));

  for (const name of cases) {
    const dir = join(root, name);
    const req = JSON.parse(readFileSync(join(dir, 'request.json'), 'utf8')) as GoldenRequest;
    const expected = JSON.parse(readFileSync(join(dir, 'response.json'), 'utf8')) as GoldenResponse;
    it(`${name}: ${expected.desc}`, async () => {
      const body = req.body === undefined ? undefined : readFileSync(join(dir, req.body));
      // As curl: an empty header value removes the header; a body defaults to the form type.
      const headers = req.headers.filter(([, v]) => v !== '');
      const named = new Set(req.headers.map(([n]) => n.toLowerCase()));
      if (body !== undefined && !named.has('content-type'))
        headers.push(['Content-Type', 'application/x-www-form-urlencoded']);
      const res = await rawRequest(server.url, {
        method: req.method,
        path: req.path,
        headers,
        ...(body ? { body } : {}),
      });
      assert.equal(res.status, expected.status, 'status');
      const ct = res.headers.get('content-type') ?? null;
      if (expected.contentType === 'text/html') assert.match(ct ?? '', /^text\/html\b/, 'content-type');
      else assert.equal(ct, expected.contentType, 'content-type');
      assert.equal(res.headers.get('cache-control') ?? null, expected.cacheControl, 'cache-control');
      assert.ok(res.headers.has('content-length'), 'Content-Length is always sent');
      assert.equal(res.headers.get('transfer-encoding'), undefined, 'never chunked');
      if (expected.compareBody) {
        const want = readFileSync(join(dir, 'response.body'));
        assert.equal(res.body.toString('utf8'), want.toString('utf8'), 'body');
        assert.ok(res.body.equals(want), 'body bytes');
      }
    });
  }
});
