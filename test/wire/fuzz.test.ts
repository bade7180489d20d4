import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { operations } from '../../src/operations/index.js';
import { readTree } from '../../src/xml/xml-tree.js';
import { rawRequest } from '../helpers/raw-http.js';
import type { RawRequest, RawResponse } from '../helpers/raw-http.js';
import { startTestServer } from '../helpers/test-server.js';
import type { TestServer } from '../helpers/test-server.js';

/**
 * Mutates valid requests for every operation and binding (byte flips, cuts, insertions, header
 * changes) and checks that every answer is one of the documented shapes, well-formed where it is
 * XML, and that the server keeps serving. `npm test` runs a short budget; `npm run fuzz` a long one.
 */
const RUNS = Number(process.env['FUZZ_RUNS'] ?? 150);
const SOAP_NS: Record<string, string> = {
  soap11: 'http://schemas.xmlsoap.org/soap/envelope/',
  soap12: 'http://www.w3.org/2003/05/soap-envelope',
};

function validRequest(opIndex: number, binding: string): RawRequest {
  const op = operations[opIndex % operations.length]!;
  const values = op.params.map((p) => [p.name, p.type === 'char' ? '1' : 'value-1'] as const);
  if (binding === 'soap11' || binding === 'soap12') {
    const inner = values.map(([n, v]) => `<${n}>${v === '1' ? '49' : v}</${n}>`).join('');
    const body = `<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="${SOAP_NS[binding]}"><soap:Body><${op.name} xmlns="http://tempuri.org/">${inner}</${op.name}></soap:Body></soap:Envelope>`;
    const headers: [string, string][] =
      binding === 'soap11'
        ? [
            ['Content-Type', 'text/xml; charset=utf-8'],
            ['SOAPAction', `"http://tempuri.org/${op.name}"`],
          ]
        : [['Content-Type', 'application/soap+xml; charset=utf-8']];
    return { method: 'POST', path: `/${op.service}.asmx`, headers, body };
  }
  const form = values.map(([n, v]) => `${n}=${encodeURIComponent(v)}`).join('&');
  return binding === 'httpget'
    ? { method: 'GET', path: `/${op.service}.asmx/${op.name}?${form}` }
    : {
        method: 'POST',
        path: `/${op.service}.asmx/${op.name}`,
        headers: [['Content-Type', 'application/x-www-form-urlencoded']],
        body: form,
      };
}

const mutation = fc.oneof(
  fc.record({ kind: fc.constant('flip' as const), at: fc.nat(), byte: fc.integer({ min: 0, max: 255 }) }),
  fc.record({ kind: fc.constant('cut' as const), at: fc.nat() }),
  fc.record({
    kind: fc.constant('insert' as const),
    at: fc.nat(),
    text: fc.oneof(
      fc.string(),
      fc.constantFrom(
        '<',
        '>',
        '&',
        '&amp;',
        '<!DOCTYPE x>',
        ']]>',
        '<![CDATA[',
        '\u0000',
        '\uFFFF',
        '%',
        '%zz',
        '+',
        '"',
        "'",
        '<a xmlns:p="">',
        '</p:x>',
        '\ud800',
      ),
    ),
  }),
  fc.record({
    kind: fc.constant('header' as const),
    name: fc.constantFrom('Content-Type', 'SOAPAction'),
    value: fc.string(),
  }),
);

type Mutation = typeof mutation extends fc.Arbitrary<infer T> ? T : never;

function mutate(req: RawRequest, muts: readonly Mutation[]): RawRequest {
  let body: Buffer = Buffer.from(req.body ?? '');
  let path = req.path;
  let headers = [...(req.headers ?? [])];
  for (const m of muts) {
    if (m.kind === 'header') {
      headers = headers.filter(([n]) => n !== m.name);
      // eslint-disable-next-line no-control-regex -- header values must be plain ASCII
      const value = m.value.replace(/[\r\n\u0000-\u001f\u007f-\uffff]/g, '');
      if (value !== '') headers.push([m.name, value]);
      continue;
    }
    const onPath = req.body === undefined;
    const target = onPath ? Buffer.from(path.slice(path.indexOf('?') + 1)) : body;
    const at = target.length === 0 ? 0 : m.at % (target.length + 1);
    let next: Buffer;
    if (m.kind === 'flip') {
      next = Buffer.from(target);
      if (at < next.length) next[at] = m.byte;
    } else if (m.kind === 'cut') next = target.subarray(0, at);
    else next = Buffer.concat([target.subarray(0, at), Buffer.from(m.text), target.subarray(at)]);
    if (onPath) {
      // Keep the request target legal for the HTTP parser: percent-encode what it would refuse.
      const safe = next
        .toString('latin1')
        .replace(/[^\x21-\x7e]|#/g, (c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
      path = `${path.slice(0, path.indexOf('?') + 1)}${safe}`;
    } else body = next;
  }
  return { ...req, path, headers, ...(req.body === undefined ? {} : { body }) };
}

function checkShape(res: RawResponse): void {
  const ct = res.headers.get('content-type');
  assert.ok([200, 400, 415, 500].includes(res.status), `unexpected status ${res.status}`);
  assert.ok(res.headers.has('content-length'));
  if (res.status === 400 || res.status === 415) {
    assert.equal(res.body.length, 0);
    return;
  }
  if (ct === undefined) {
    assert.equal(res.status, 200);
    assert.equal(res.body.length, 0);
    return;
  }
  assert.ok(
    [
      'text/xml; charset=utf-8',
      'application/soap+xml; charset=utf-8',
      'text/plain; charset=utf-8',
      'text/html; charset=utf-8',
    ].includes(ct),
    `content-type ${ct}`,
  );
  if (ct.includes('xml')) readTree(res.body.toString('utf8'));
  if (ct.startsWith('text/plain')) assert.ok(res.body.toString().endsWith('\r\n'));
  assert.doesNotMatch(res.body.toString(), /\n\s+at \S+ \(|node_modules|\.ts:\d+/, 'no stack trace');
}

describe('fuzzed requests', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ dataset: { devices: [{ id: 'value-1', token: 't' }] } });
  });
  after(() => server.close());

  for (const binding of ['soap11', 'soap12', 'httpget', 'httppost']) {
    it(`${binding}: every mutated request gets a documented answer (${RUNS} runs)`, { timeout: 600_000 }, async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.nat({ max: operations.length - 1 }),
          fc.array(mutation, { minLength: 1, maxLength: 4 }),
          async (op, muts) => {
            const res = await rawRequest(server.url, mutate(validRequest(op, binding), muts));
            checkShape(res);
          },
        ),
        { numRuns: RUNS },
      );
      const alive = await rawRequest(server.url, validRequest(3, 'httpget'));
      assert.equal(alive.status, 200);
    });
  }
});
