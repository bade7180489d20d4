/** HTTPS served directly, with a self-signed certificate made at test time by openssl. */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config/config.js';
import { HAVE_OPENSSL, makeCertificate } from '../helpers/certificates.js';
import { startTestServer } from '../helpers/test-server.js';
import type { TestServer } from '../helpers/test-server.js';

const dir = mkdtempSync(join(tmpdir(), 'sis-tls-'));
const { cert, key } = HAVE_OPENSSL ? makeCertificate(dir, 'server', 1) : { cert: '', key: '' };
after(() => rmSync(dir, { recursive: true, force: true }));

function httpsGet(url: string, ca: Buffer): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    request(url, { ca, agent: false }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    })
      .on('error', reject)
      .end();
  });
}

describe('HTTPS', { skip: HAVE_OPENSSL ? false : 'openssl is not installed: cannot make a test certificate' }, () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({
      env: { SIS_TLS_CERT: cert, SIS_TLS_KEY: key },
      dataset: { devices: [{ id: '1', token: 'tok-1' }] },
    });
  });
  after(() => server.close());

  it('serves over TLS, and the WSDL addresses say https', async () => {
    assert.match(server.url, /^https:\/\/127\.0\.0\.1:\d+$/);
    const ca = readFileSync(cert);
    const wsdl = await httpsGet(`${server.url}/PushNotificationMobile.asmx?WSDL`, ca);
    assert.equal(wsdl.status, 200);
    const locations = [...wsdl.body.matchAll(/:address location="([^"]+)"/g)].map((m) => m[1]);
    assert.ok(locations.length >= 4, wsdl.body.slice(0, 200));
    for (const l of locations) assert.equal(l, `${server.url}/PushNotificationMobile.asmx`);
    const op = await httpsGet(`${server.url}/PushNotificationMobile.asmx/GetTokenDevice?id=1`, ca);
    assert.match(op.body, /tok-1/);
    assert.equal((await httpsGet(`${server.url}/readyz`, ca)).status, 200);
  });

  it('refuses a plain-HTTP request on the TLS port', async () => {
    await assert.rejects(fetch(server.url.replace('https:', 'http:') + '/healthz'));
  });

  it('a key that does not match the certificate stops the start', () => {
    const otherKey = makeCertificate(dir, 'other').key;
    assert.throws(
      () => loadConfig({ SIS_TLS_CERT: cert, SIS_TLS_KEY: otherKey }),
      (err: unknown) =>
        err instanceof ConfigError &&
        err.problems.length === 1 &&
        /^SIS_TLS_KEY=".*" does not match the certificate in SIS_TLS_CERT=/.test(err.problems[0]!),
    );
    assert.throws(() => loadConfig({ SIS_TLS_CERT: cert }), /SIS_TLS_KEY: required when SIS_TLS_CERT is set/);
  });
});
