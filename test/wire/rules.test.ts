import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { rawRequest } from '../helpers/raw-http.js';
import { startTestServer } from '../helpers/test-server.js';
import type { TestServer } from '../helpers/test-server.js';

const dataset = { devices: [{ id: '1', token: 'tok-AAA-111' }] };
const address = (wsdl: string): string => /<soap:address location="([^"]*)"/.exec(wsdl)?.[1] ?? '';

describe('routing and transport rules', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ dataset, env: { SIS_TRUSTED_PROXIES: '127.0.0.1' } });
  });
  after(() => server.close());

  it('.asmx file names match case-insensitively; operation names do not', async () => {
    const ok = await rawRequest(server.url, {
      method: 'GET',
      path: '/pushnotificationmobile.ASMX/GetTokenDevice?id=1',
    });
    assert.equal(ok.status, 200);
    assert.match(ok.body.toString(), /tok-AAA-111/);
    const wrongCase = await rawRequest(server.url, {
      method: 'GET',
      path: '/PushNotificationMobile.asmx/GETTOKENDEVICE?id=1',
    });
    assert.equal(wrongCase.status, 500);
  });

  it('unknown files and paths are 404 HTML pages', async () => {
    for (const path of ['/Nope.asmx', '/', '/PushNotificationMobile.aspx', '/%E0%A4%A.asmx']) {
      const res = await rawRequest(server.url, { method: 'GET', path });
      assert.equal(res.status, 404, path);
      assert.match(res.headers.get('content-type') ?? '', /^text\/html/);
    }
  });

  it('answers advertise no stack and always carry Content-Length and a request id', async () => {
    const res = await rawRequest(server.url, {
      method: 'GET',
      path: '/PushNotificationMobile.asmx/GetTokenDevice?id=1',
    });
    for (const h of ['server', 'x-powered-by', 'x-aspnet-version']) assert.equal(res.headers.get(h), undefined, h);
    assert.equal(res.headers.get('content-length'), String(res.body.length));
    assert.match(res.headers.get('x-request-id') ?? '', /^[0-9a-f]+-[0-9a-z]+$/);
  });

  it('WSDL and disco addresses use the Host header with its port', async () => {
    const res = await rawRequest(server.url, {
      method: 'GET',
      path: '/PushNotificationMobile.asmx?WSDL',
      headers: [['Host', 'school.example:8443']],
    });
    assert.equal(address(res.body.toString()), 'http://school.example:8443/PushNotificationMobile.asmx');
  });

  it('a Host header that is not a host name never reaches the WSDL', async () => {
    const res = await rawRequest(server.url, {
      method: 'GET',
      path: '/PushNotificationMobile.asmx?wsdl',
      headers: [['Host', 'evil"><script>x</script>']],
    });
    assert.equal(res.status, 200);
    assert.doesNotMatch(res.body.toString(), /script/);
    assert.match(address(res.body.toString()), /^http:\/\/127\.0\.0\.1:\d+\/PushNotificationMobile\.asmx$/);
  });

  it('X-Forwarded-Proto and -Host are believed from a trusted proxy', async () => {
    const res = await rawRequest(server.url, {
      method: 'GET',
      path: '/PushNotificationMobile.asmx?disco',
      headers: [
        ['X-Forwarded-Proto', 'https'],
        ['X-Forwarded-Host', 'sis.example.org'],
      ],
    });
    assert.match(res.body.toString(), /<soap address="https:\/\/sis\.example\.org\/PushNotificationMobile\.asmx"/);
  });
  it('offers the help page test form to local callers only, judging by X-Forwarded-For behind a trusted proxy', async () => {
    const local = await rawRequest(server.url, {
      method: 'GET',
      path: '/PushNotificationMobile.asmx?op=GetTokenDevice',
    });
    assert.match(local.body.toString(), /<form [^>]*method="post"/);
    const remote = await rawRequest(server.url, {
      method: 'GET',
      path: '/PushNotificationMobile.asmx?op=GetTokenDevice',
      headers: [['X-Forwarded-For', '203.0.113.9']],
    });
    assert.doesNotMatch(remote.body.toString(), /<form [^>]*method="post"/);
    assert.match(remote.body.toString(), /The test form is only available for requests from the local machine\./);
  });
});

describe('mounted under a base path, with a public URL', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({
      dataset,
      env: { SIS_BASE_PATH: '/School/', SIS_PUBLIC_URL: 'https://public.example' },
    });
  });
  after(() => server.close());

  it('serves every binding under the base path only', async () => {
    const ok = await rawRequest(server.url, {
      method: 'GET',
      path: '/School/PushNotificationMobile.asmx/GetTokenDevice?id=1',
    });
    assert.equal(ok.status, 200);
    const outside = await rawRequest(server.url, {
      method: 'GET',
      path: '/PushNotificationMobile.asmx/GetTokenDevice?id=1',
    });
    assert.equal(outside.status, 404);
  });

  it('writes the public URL and base path into the WSDL', async () => {
    const res = await rawRequest(server.url, {
      method: 'GET',
      path: '/School/PushNotificationMobile.asmx?WSDL',
      headers: [['Host', 'internal:1']],
    });
    assert.equal(address(res.body.toString()), 'https://public.example/School/PushNotificationMobile.asmx');
  });

  it('help pages link and post to the mounted paths', async () => {
    const res = await rawRequest(server.url, {
      method: 'GET',
      path: '/School/PushNotificationMobile.asmx?op=GetTokenDevice',
    });
    assert.equal(res.status, 200);
    assert.match(res.body.toString(), /action="\/School\/PushNotificationMobile\.asmx\/GetTokenDevice"/);
  });
});

describe('a large school that fits in one page', () => {
  let server: TestServer;
  // 1,000 = SIS_LIST_PAGE_ROWS' default: the longest list still answered whole (longer ones are
  // streamed, decision 17: test/wire/large-lists.test.ts).
  const students = Array.from({ length: 1000 }, (_, i) => ({
    id_student: String(i),
    fullName: `Élève ${i} <&>`,
    id_device: `dev-${i}`,
    ShowActive: '1',
    school_base_url: 'http://big.example',
  }));
  before(async () => {
    server = await startTestServer({ dataset: { students } });
  });
  after(() => server.close());

  it('answers every student, in order, under one exact Content-Length, never chunked', async () => {
    for (const req of [
      {
        method: 'GET',
        path: '/NotificationNotes.asmx/GetStudentSchool?school_base_url=http%3A%2F%2Fbig.example&show_active=1',
      },
      {
        method: 'POST',
        path: '/NotificationNotes.asmx',
        headers: [
          ['Content-Type', 'text/xml; charset=utf-8'],
          ['SOAPAction', '"http://tempuri.org/GetStudentSchool"'],
        ] as [string, string][],
        body: '<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body><GetStudentSchool xmlns="http://tempuri.org/"><school_base_url>http://big.example</school_base_url><show_active>49</show_active></GetStudentSchool></soap:Body></soap:Envelope>',
      },
    ]) {
      const res = await rawRequest(server.url, req);
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('transfer-encoding'), undefined);
      assert.equal(Number(res.headers.get('content-length')), res.body.length);
      const ids = [...res.body.toString('utf8').matchAll(/<id_student>(\d+)<\/id_student>/g)].map((m) => Number(m[1]));
      assert.deepEqual(
        ids,
        students.map((_, i) => i),
      );
      assert.ok(res.body.toString('utf8').includes('<fullName>Élève 999 &lt;&amp;&gt;</fullName>'));
    }
  });
});
