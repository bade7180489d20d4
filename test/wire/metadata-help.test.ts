/** The .NET-style HTML help pages (decision 7). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ServiceSpec } from '../../src/contract/types.js';
import { renderOperationHelp, renderServiceHelp, type HelpPageOptions } from '../../src/metadata/help-page.js';
import { services } from '../../src/operations/index.js';

const TEMPURI = 'http://tempuri.org/';
const opts = (service: ServiceSpec<unknown>, more: Partial<HelpPageOptions> = {}): HelpPageOptions => ({
  namespace: TEMPURI,
  path: `/School/${service.name}.asmx`,
  host: 'school.example:8080',
  showTestForm: true,
  ...more,
});

/** Every tag the pages may contain: anything else means markup got in from data. */
const ALLOWED_TAGS = new Set(
  '!DOCTYPE html head meta title link style body div h1 h2 h3 p a ul li br table tr th td form label input pre span'.split(
    ' ',
  ),
);

function assertOnlyKnownTags(page: string): void {
  for (const [, name = ''] of page.matchAll(/<\/?([!\w-]+)/g)) assert.ok(ALLOWED_TAGS.has(name), `tag <${name}>`);
}

function assertHtml5Shell(page: string, service: string): void {
  assert.ok(page.startsWith('<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">'));
  assert.ok(page.includes(`<title>${service} Web Service</title>`));
  assert.ok(page.trimEnd().endsWith('</html>'));
  assert.ok(!page.includes('<script'), 'readable without JavaScript: there is none');
  assertOnlyKnownTags(page);
}

const allPages = (o: (s: ServiceSpec<unknown>) => HelpPageOptions): [string, string][] =>
  services.flatMap((s) => [
    [s.name, renderServiceHelp(s, o(s))] as [string, string],
    ...s.operations.map((op) => [s.name, renderOperationHelp(s, op, o(s))] as [string, string]),
  ]);

describe('service help page', () => {
  for (const service of services) {
    it(`${service.name}: lists every operation with its doc and links to ?op= and ?WSDL`, () => {
      const page = renderServiceHelp(service, opts(service));
      assertHtml5Shell(page, service.name);
      const path = `/School/${service.name}.asmx`;
      assert.ok(page.includes(`<a href="${path}?WSDL">Service Description</a>`));
      assert.ok(page.includes(`<link rel="alternate" type="text/xml" href="${path}?disco">`));
      let last = -1;
      for (const op of service.operations) {
        const at = page.indexOf(`<li><a href="${path}?op=${op.name}">${op.name}</a><br>`);
        assert.ok(at > last, `${op.name} listed, in declaration order`);
        assert.ok(page.includes(op.doc.replaceAll("'", '&#39;')));
        last = at;
      }
    });
  }
});

describe('operation help page', () => {
  for (const service of services) {
    for (const op of service.operations) {
      it(`${service.name}.${op.name}: doc, parameters and samples for the four bindings`, () => {
        const page = renderOperationHelp(service, op, opts(service));
        assertHtml5Shell(page, service.name);
        const path = `/School/${service.name}.asmx`;
        assert.ok(page.includes(`<h2>${op.name}</h2>`));
        assert.ok(page.includes(`Click <a href="${path}">here</a> for a complete list of operations.`));
        for (const p of op.params) assert.ok(page.includes(`<tr><td>${p.name}</td><td>${p.type}</td>`), p.name);
        for (const title of ['SOAP 1.1', 'SOAP 1.2', 'HTTP GET', 'HTTP POST']) {
          assert.ok(page.includes(`>${title}</h3>\n<p>The following is a sample ${title} request and response.`));
        }
        const length = 'Content-Length: <span class="value">length</span>';
        const soapHead = `POST ${path} HTTP/1.1\nHost: school.example:8080\nContent-Type: text/xml; charset=utf-8\n`;
        assert.ok(page.includes(`${soapHead}${length}\nSOAPAction: &quot;${TEMPURI}${op.name}&quot;\n\n`));
        const soap12Head = `POST ${path} HTTP/1.1\nHost: school.example:8080\nContent-Type: application/soap+xml; charset=utf-8\n`;
        assert.ok(page.includes(`${soap12Head}${length}\n\n`));
        assert.ok(page.includes(`&lt;${op.name}Response xmlns=&quot;${TEMPURI}&quot;`));
        const query = op.params.map((p) => `${p.name}=<span class="value">string</span>`).join('&amp;');
        assert.ok(
          page.includes(
            `<pre>GET ${path}/${op.name}${query ? `?${query}` : ''} HTTP/1.1\nHost: school.example:8080</pre>`,
          ),
        );
        const postHead = `<pre>POST ${path}/${op.name} HTTP/1.1\nHost: school.example:8080\nContent-Type: application/x-www-form-urlencoded\n`;
        assert.ok(page.includes(`${postHead}${length}\n\n${query}</pre>`));
      });
    }
  }

  it('samples show a char as its type in SOAP and as a string in GET and POST', () => {
    const service = services.find((s) => s.name === 'NotificationNotes')!;
    const page = renderOperationHelp(service, service.operations[0]!, opts(service));
    assert.ok(page.includes('&lt;show_active&gt;<span class="value">char</span>&lt;/show_active&gt;'));
    assert.ok(page.includes('&amp;show_active=<span class="value">string</span>'));
    // A list result: two items, and the HTTP answer's root is ArrayOfStudentInfo.
    assert.equal(page.split('&lt;StudentInfo&gt;').length - 1, 8);
    assert.ok(page.includes('&lt;ArrayOfStudentInfo xmlns=&quot;http://tempuri.org/&quot;&gt;'));
  });

  it('string and void answers of HTTP GET/POST', () => {
    const service = services.find((s) => s.name === 'PushNotificationMobile')!;
    const [tokenDevice, serverKey] = service.operations;
    const withString = renderOperationHelp(service, tokenDevice!, opts(service));
    assert.ok(
      withString.includes(
        '&lt;string xmlns=&quot;http://tempuri.org/&quot;&gt;<span class="value">string</span>&lt;/string&gt;</pre>',
      ),
    );
    const withVoid = renderOperationHelp(service, serverKey!, opts(service));
    assert.equal(withVoid.split('<pre>HTTP/1.1 200 OK</pre>').length - 1, 2, 'no body for void');
    assert.ok(withVoid.includes('&lt;GetServerKeyAndSenderResponse xmlns=&quot;http://tempuri.org/&quot; /&gt;'));
  });

  it('uses the SOAP action rule for a namespace without a trailing slash', () => {
    const service = services.find((s) => s.name === 'AuthCodeSending')!;
    const page = renderOperationHelp(service, service.operations[0]!, opts(service, { namespace: 'urn:school' }));
    assert.ok(page.includes('SOAPAction: &quot;urn:school/AuthCode&quot;'));
    assert.ok(page.includes('&lt;AuthCode xmlns=&quot;urn:school&quot;&gt;'));
  });

  it('shows the test form only when allowed', () => {
    const service = services.find((s) => s.name === 'AuthCodeSending')!;
    const op = service.operations[0]!;
    const local = renderOperationHelp(service, op, opts(service));
    assert.ok(local.includes('<form method="post" action="/School/AuthCodeSending.asmx/AuthCode" target="_blank">'));
    for (const p of op.params) assert.ok(local.includes(`name="${p.name}"`));
    assert.ok(local.includes('<input type="submit" value="Invoke" class="button">'));
    assert.ok(!local.includes('only available for requests from the local machine'));
    const remote = renderOperationHelp(service, op, opts(service, { showTestForm: false }));
    assert.ok(!remote.includes('<form') && !remote.includes('<input'));
    assert.ok(remote.includes('The test form is only available for requests from the local machine.'));
  });
});

describe('hostile Host and path', () => {
  const host = '<script>alert(1)</script>"\'&';
  const path = '/x"><script>alert(2)</script>\'.asmx';
  const hostile = (s: ServiceSpec<unknown>): HelpPageOptions => opts(s, { host, path });

  it('are escaped on every page', () => {
    for (const [service, page] of allPages(hostile)) {
      assertHtml5Shell(page, service);
      assert.ok(!page.includes('alert(1)</script>') && !page.includes('/x"'));
      assert.ok(page.includes('/x&quot;&gt;&lt;script&gt;alert(2)&lt;/script&gt;&#39;.asmx'));
    }
    for (const [, page] of allPages(hostile).filter(([, p]) => p.includes('<pre>'))) {
      assert.ok(page.includes('Host: &lt;script&gt;alert(1)&lt;/script&gt;&quot;&#39;&amp;\n'));
    }
  });

  it('cannot point links or the form at another host', () => {
    for (const evil of ['//evil.example/X.asmx', '/\\evil.example/X.asmx', '\\\\evil.example/X.asmx']) {
      for (const [, page] of allPages((s) => opts(s, { path: evil }))) {
        assert.ok(!/(?:href|action)="(?:[/\\]{2}|[a-z]+:)/i.test(page.replace('href="http', '')), evil);
        assert.ok(page.includes('="/evil.example/X.asmx'));
      }
    }
  });
});
