/**
 * Hostile XML, each sent to a real server over a socket (XXE, billion laughs, deep nesting, many
 * attributes, huge element names, bad UTF-8 and UTF-16): the answer is checked, and so is that the
 * server still serves the next request.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { envelope, hostileServer } from '../helpers/hostile-server.js';
import type { RawResponse } from '../helpers/raw-http.js';

describe('hostile input: XML', () => {
  const { soap, stillServes } = hostileServer();

  const refusedAsXml = (res: RawResponse): void => {
    assert.equal(res.status, 400);
    assert.equal(res.body.length, 0);
    assert.equal(res.headers.get('content-type'), 'text/xml; charset=utf-8');
  };

  it('XXE: an external entity is refused, never resolved', async () => {
    const res = await soap(
      envelope('<id>&xxe;</id>', '<!DOCTYPE soap:Envelope [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>'),
    );
    refusedAsXml(res);
    assert.doesNotMatch(res.body.toString(), /root:/);
    await stillServes();
  });

  it('XXE: a parameter entity is refused', async () => {
    const res = await soap(
      envelope('<id>1</id>', '<!DOCTYPE x [<!ENTITY % p SYSTEM "http://127.0.0.1:9/evil.dtd"> %p;]>'),
    );
    refusedAsXml(res);
    await stillServes();
  });

  it('billion laughs is refused at once', async () => {
    let dtd = '<!ENTITY lol "lol">';
    for (let i = 1; i < 10; i++) dtd += `<!ENTITY lol${i} "${`&lol${i === 1 ? '' : i - 1};`.repeat(10)}">`;
    const started = Date.now();
    const res = await soap(envelope('<id>&lol9;</id>', `<!DOCTYPE lolz [${dtd}]>`));
    refusedAsXml(res);
    assert.ok(Date.now() - started < 2000);
    await stillServes();
  });

  it('100,000 nested elements are refused', async () => {
    const res = await soap(envelope(`${'<a>'.repeat(100_000)}${'</a>'.repeat(100_000)}<id>1</id>`));
    refusedAsXml(res);
    await stillServes();
  });

  it('100,000 attributes on one element are refused', async () => {
    const attrs = Array.from({ length: 100_000 }, (_, i) => `a${i}="1"`).join(' ');
    const res = await soap(envelope(`<id ${attrs}>1</id>`));
    refusedAsXml(res);
    await stillServes();
  });

  it('a 1 MB element name gets a fault, not a crash', async () => {
    const name = 'x'.repeat(1024 * 1024 - 200);
    const res = await soap(`<${name}/>`);
    assert.ok([400, 500].includes(res.status), `status ${res.status}`);
    await stillServes();
  });

  it('invalid UTF-8 is refused as malformed XML', async () => {
    const body = Buffer.concat([
      Buffer.from(envelope('<id>').slice(0, -'</GetTokenDevice></soap:Body></soap:Envelope>'.length)),
      Buffer.from([0xc3, 0x28, 0xff]),
      Buffer.from('</id></GetTokenDevice></soap:Body></soap:Envelope>'),
    ]);
    refusedAsXml(await soap(body));
    await stillServes();
  });

  it('UTF-16 without a byte order mark is read', async () => {
    const res = await soap(Buffer.from(envelope('<id>1</id>').replace('utf-8', 'utf-16'), 'utf16le'), [
      ['Content-Type', 'text/xml; charset=utf-16'],
      ['SOAPAction', '"http://tempuri.org/GetTokenDevice"'],
    ]);
    assert.equal(res.status, 200);
    assert.match(res.body.toString(), /<GetTokenDeviceResult>tok-AAA-111</);
  });
});
