/**
 * Personal data masked by what the binding read, not by a pattern: every value of a parameter the
 * contract marks personal (AuthCode's `phone` and `code`) is masked wherever it occurs in a kept
 * difference (the request's path, query and body, both answers), however it was spelled: field
 * names in another case (`Phone=`, `Code=`) or percent-encoded (`ph%6Fne=`), values in CDATA,
 * percent-encoded or XML-escaped, a phone written with spaces (and echoed without them). A phone
 * keeps its last two digits. Student names in kept list answers are masked in the report's default
 * output; `--show-personal` shows them. Control characters from a legacy answer are shown escaped
 * in the report's text.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { openStore } from '../../src/store/open/open-store.js';
import { eventually } from '../helpers/eventually.js';
import { rawRequest } from '../helpers/raw-http.js';
import { databaseUrlOf, shadowCli, startShadowed } from '../helpers/shadow-run.js';

/** The phone's digits, and runs of them that must never be kept (anything longer than its last two). */
const PHONE_DIGITS = '966501234567';
const LEAKS = ['96650', '50123', '01234', '234567', '50 123', '50%20123', '5&#48;', '5%30'];
const CODES = ['4821', '7391', '5513', '2468'];

/** A legacy that refuses every AuthCode with a fault echoing the whole request, and the phone unspaced. */
async function echoingLegacy(): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      res
        .writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' })
        .end(`refused ${req.url} ${body} for +${PHONE_DIGITS}\r\n`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const soap11 = (params: string): string =>
  '<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body>' +
  `<AuthCode xmlns="http://tempuri.org/">${params}</AuthCode></soap:Body></soap:Envelope>`;

describe('personal data in kept differences', () => {
  it('is masked by what the binding read, in every spelling, in the request and both answers', async () => {
    const legacy = await echoingLegacy();
    const server = await startShadowed({ SIS_SHADOW: 'legacy', SIS_LEGACY_URL: legacy.url, SIS_SHADOW_RECHECK: 'off' });
    const path = '/AuthCodeSending.asmx';
    try {
      const requests = [
        // Names in another case, the phone percent-encoded with its spaces.
        { method: 'GET', path: `${path}/AuthCode?Code=4821&Phone=%2B966%2050%20123%204567` },
        // A percent-encoded name, the phone's digits partly percent-encoded.
        {
          method: 'POST',
          path: `${path}/AuthCode`,
          headers: [['Content-Type', 'application/x-www-form-urlencoded']] as [string, string][],
          body: 'ph%6Fne=%2B9665%301234567&c%6Fde=7391',
        },
        // CDATA, in SOAP 1.2 without its action (routed by the body element).
        {
          method: 'POST',
          path,
          headers: [['Content-Type', 'application/soap+xml; charset=utf-8']] as [string, string][],
          body: soap11('<code><![CDATA[5513]]></code><phone><![CDATA[+966501234567]]></phone>').replace(
            'http://schemas.xmlsoap.org/soap/envelope/',
            'http://www.w3.org/2003/05/soap-envelope',
          ),
        },
        // Spaces in the phone, a digit as an XML character reference, the code escaped.
        {
          method: 'POST',
          path,
          headers: [
            ['Content-Type', 'text/xml; charset=utf-8'],
            ['SOAPAction', '"http://tempuri.org/AuthCode"'],
          ] as [string, string][],
          body: soap11('<code>&#50;468</code><phone>+966 5&#48; 123 4567</phone>'),
        },
      ];
      for (const r of requests) assert.equal((await rawRequest(server.url, r)).status, 500, `${r.method} ${r.path}`);
      // Examples are kept in the background: read once all four are there.
      const store = await openStore(databaseUrlOf(server));
      let examples: Awaited<ReturnType<typeof store.shadow.examples>> = [];
      try {
        await eventually(async () => {
          examples = await store.shadow.examples(new Date(0));
          assert.equal(examples.length, requests.length, 'one example kept per request');
        });
      } finally {
        await store.close();
      }
      // What is kept of each (the Host header names a port, whose digits could be anything).
      const kept = JSON.stringify(
        examples.map(({ example: e }) => [e.request.path, e.request.body, e.legacy.body, e.ours.body, e.paths]),
      );
      for (const leak of [...LEAKS, ...CODES]) assert.ok(!kept.includes(leak), `${leak} is kept in clear: ${kept}`);
      // The phone as `sis outbox` shows it: its last two digits.
      assert.match(kept, /\*{8,}67/);
    } finally {
      await server.close();
      await legacy.close();
    }
  });
});

describe('the report of what was kept', () => {
  it("masks students' names by default (--show-personal shows them), and escapes control characters", async () => {
    // A legacy whose list answer differs from ours: a name of its own, and an ESC sequence that
    // would clear the operator's screen.
    const legacyBody =
      '<?xml version="1.0" encoding="utf-8"?>\n<ArrayOfStudentInfo xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns="http://tempuri.org/">' +
      '<StudentInfo><id_student>1</id_student><fullName>Layla Haddad\u001b[2J\u001b[H</fullName></StudentInfo></ArrayOfStudentInfo>';
    const server0 = createServer((req, res) => {
      req.resume().on('end', () => res.writeHead(200, { 'Content-Type': 'text/xml; charset=utf-8' }).end(legacyBody));
    });
    await new Promise<void>((resolve) => server0.listen(0, '127.0.0.1', resolve));
    const server = await startShadowed({
      SIS_SHADOW: 'legacy',
      SIS_LEGACY_URL: `http://127.0.0.1:${(server0.address() as AddressInfo).port}/`,
      SIS_SHADOW_RECHECK: 'off',
    });
    try {
      await rawRequest(server.url, {
        method: 'GET',
        path: '/NotificationNotes.asmx/GetStudentSchool?school_base_url=http%3A%2F%2Fschool-a.example&show_active=1',
      });
      await server.app.close();
      const env = { SIS_DATABASE_URL: databaseUrlOf(server) };
      const text = await shadowCli(['report'], env);
      assert.equal(text.code, 0, text.err);
      assert.ok(!text.out.includes('Layla') && !text.out.includes('Haddad'), text.out);
      assert.match(text.out, /L\*{4} H\*{5}/);
      assert.ok(!text.out.includes('\u001b'), 'no raw ESC reaches the terminal');
      assert.match(text.out, /\\x1b\[2J/);
      const json = await shadowCli(['report', '--json'], env);
      assert.ok(!json.out.includes('Layla'), 'masked in the JSON too');
      const shown = await shadowCli(['report', '--show-personal'], env);
      assert.match(shown.out, /Layla Haddad/);
    } finally {
      await server.close();
      await new Promise<void>((resolve) => server0.close(() => resolve()));
    }
  });
});
