import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { readEnvelopeFully } from '../../src/xml/envelope-reader.js';
import type { Envelope } from '../../src/xml/envelope-reader.js';
import { scanEnvelope } from '../../src/xml/envelope-scanner.js';
import { fixture } from '../helpers/test-server.js';

/**
 * The fast envelope scanner must agree with the full saxes reader wherever it answers (it
 * declines, returning null, for everything unusual). Checked on every golden request and on
 * generated envelopes that vary prefixes, declarations, white space, entities and structure.
 */
const NS = 'http://tempuri.org/';
const LIMITS = { maxDepth: 64, maxAttributes: 256, maxParams: 1024 };

function plain(e: Envelope): unknown {
  return {
    root: e.root,
    bodyElement: e.bodyElement,
    mustUnderstand: e.mustUnderstand,
    error: e.error?.message ?? null,
    params: [...e.params],
  };
}

function agree(xml: string): boolean {
  const fast = scanEnvelope(xml, NS);
  if (fast === null) return false;
  assert.deepEqual(plain(fast), plain(readEnvelopeFully(xml, NS, LIMITS)), xml);
  return true;
}

describe('envelope scanner agrees with the full reader', () => {
  it('on every golden SOAP request it takes', () => {
    const root = fixture('golden');
    let taken = 0;
    for (const name of readdirSync(root)) {
      const body = join(root, name, 'request.body');
      if (!existsSync(body) || !/^soap|err_/.test(name)) continue;
      if (agree(readFileSync(body, 'utf8'))) taken++;
    }
    assert.ok(taken >= 30, `the fast path took only ${taken} golden requests`);
  });

  const ws = fc.constantFrom('', ' ', '\n', '\n  ', '\t');
  const prefix = fc.constantFrom('soap', 'env', 's', 'SOAP-ENV');
  const envNs = fc.constantFrom(
    'http://schemas.xmlsoap.org/soap/envelope/',
    'http://www.w3.org/2003/05/soap-envelope',
    'urn:other',
  );
  const text = fc.oneof(
    fc.string({ maxLength: 12 }),
    fc.constantFrom(
      'a &amp; b',
      '&lt;x&gt;',
      '&#65;&#x42;',
      '&quot;&apos;',
      'é😀',
      'a > b',
      '&bogus;',
      '&#0;',
      '&#x9;',
      'a\r\nb',
      ']]>',
      '<',
      '&',
    ),
  );
  const param = fc.record({
    name: fc.constantFrom('id', 'code', 'phone', 'show_active', '__proto__', 'x'),
    qualified: fc.constantFrom('default', 'prefixed', 'none'),
    text,
    selfClose: fc.boolean(),
  });
  const doc = fc.record({
    decl: fc.constantFrom(
      '',
      '<?xml version="1.0" encoding="utf-8"?>',
      "<?xml version='1.0'?>",
      '<?xml version="1.1"?>',
      ' <?xml version="1.0"?>',
    ),
    prefix,
    envNs,
    ws1: ws,
    ws2: ws,
    ws3: ws,
    header: fc.constantFrom('', '<H:Header xmlns:H="x"/>'),
    op: fc.constantFrom('GetTokenDevice', 'GetStudentSchool', 'Nope'),
    opNs: fc.constantFrom(NS, 'urn:wrong', ''),
    opPrefixed: fc.boolean(),
    params: fc.array(param, { maxLength: 4 }),
    emptyBody: fc.boolean(),
    trailer: fc.constantFrom('', '\n', ' x', '<!-- c -->'),
  });

  it('on generated envelopes', () => {
    let taken = 0;
    fc.assert(
      fc.property(doc, (d) => {
        const op = d.opPrefixed ? `o:${d.op}` : d.op;
        const opDecl = d.opPrefixed ? `xmlns:o="${d.opNs}"` : `xmlns="${d.opNs}"`;
        const params = d.params
          .map((p) => {
            const name = p.qualified === 'prefixed' && d.opPrefixed ? `o:${p.name}` : p.name;
            const decl = p.qualified === 'none' ? ' xmlns=""' : '';
            return p.selfClose ? `<${name}${decl}/>` : `<${name}${decl}>${p.text}</${name}>`;
          })
          .join(d.ws3);
        const body = d.emptyBody
          ? `<${d.prefix}:Body/>`
          : `<${d.prefix}:Body>${d.ws2}<${op} ${opDecl}>${d.ws3}${params}${d.ws3}</${op}>${d.ws2}</${d.prefix}:Body>`;
        const xml = `${d.decl}<${d.prefix}:Envelope xmlns:${d.prefix}="${d.envNs}" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">${d.ws1}${d.header}${body}${d.ws1}</${d.prefix}:Envelope>${d.trailer}`;
        if (agree(xml)) taken++;
      }),
      { numRuns: 3000 },
    );
    assert.ok(taken > 200, `the fast path took only ${taken} of 3000 generated envelopes`);
  });

  it('reads a request whose head (everything before the first parameter) it has seen from the parameters on, alike', () => {
    const head = `<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body><GetTokenDevice xmlns="${NS}">`;
    const tail = '</GetTokenDevice></soap:Body></soap:Envelope>';
    assert.ok(agree(`${head}<id>1</id>${tail}`), 'read whole, head kept');
    assert.ok(agree(`${head}<id>a&amp;b</id>  ${tail}`), 'read from the parameters on');
    assert.ok(agree(`${head}\n  <id>x</id>\n  <other>y</other>${tail}\n`));
    assert.equal(scanEnvelope(`${head}<id>1</id>${tail}<x/>`, NS), null, 'a second root still declines');
    assert.equal(
      scanEnvelope(`${head}<id>1</id></Other></soap:Body></soap:Envelope>`, NS),
      null,
      'a mismatched end tag still declines',
    );
    assert.equal(
      scanEnvelope(`${head}<id a="1">1</id>${tail}`, NS),
      null,
      'an attribute on a parameter still declines',
    );
    // After a kept head, only the rest is looked at for what the fast path leaves to saxes.
    for (const [text, why] of [
      ['a\rb', 'a CR'],
      ['a\u0001b', 'a control character'],
      ['\uD800', 'a lone surrogate'],
      ['a]]>b', '`]]>`'],
    ])
      assert.equal(scanEnvelope(`${head}<id>${text}</id>${tail}`, NS), null, `${why} after a kept head declines`);
    assert.equal(scanEnvelope(`${head}<id>1</id>${tail}\r\n`, NS), null, 'a CR at the very end declines');
    const read = scanEnvelope(`${head}<id>2</id>${tail}`, NS)!;
    assert.equal(read.params.get('id')?.text, '2');
    assert.deepEqual(read.bodyElement, { ns: NS, local: 'GetTokenDevice' });
  });
});
