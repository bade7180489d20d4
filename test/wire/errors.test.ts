import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { withOverrides } from '../../src/store/forward-store.js';
import { openStore } from '../../src/store/open/open-store.js';
import type { SqlStore } from '../../src/store/sql/sql-store.js';
import { rawRequest } from '../helpers/raw-http.js';
import { sqliteRows } from '../helpers/sqlite-file.js';
import { startTestServer } from '../helpers/test-server.js';
import type { TestServer } from '../helpers/test-server.js';

const dataset = { devices: [{ id: '1', token: 'tok-AAA-111' }] };
const env11 = (op: string, inner: string, header = ''): string =>
  `<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/">${header}<soap:Body><${op} xmlns="http://tempuri.org/">${inner}</${op}></soap:Body></soap:Envelope>`;

describe('errors ASMX answers where no capture shows .NET', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ dataset });
  });
  after(() => server.close());

  it('application/json with a SOAPAction is 415 with an empty body (.NET; Mono differs)', async () => {
    const res = await rawRequest(server.url, {
      method: 'POST',
      path: '/PushNotificationMobile.asmx',
      headers: [
        ['Content-Type', 'application/json'],
        ['SOAPAction', '"http://tempuri.org/GetTokenDevice"'],
      ],
      body: '{"id":"1"}',
    });
    assert.equal(res.status, 415);
    assert.equal(res.body.length, 0);
    assert.equal(res.headers.get('content-type'), 'text/xml; charset=utf-8');
    assert.equal(res.headers.get('cache-control'), 'private');
  });

  it('application/json without a SOAPAction is the SOAP 1.2 routing fault (.NET)', async () => {
    const res = await rawRequest(server.url, {
      method: 'POST',
      path: '/PushNotificationMobile.asmx',
      headers: [['Content-Type', 'application/json']],
      body: '{"id":"1"}',
    });
    assert.equal(res.status, 500);
    assert.equal(res.headers.get('content-type'), 'application/soap+xml; charset=utf-8');
    assert.match(
      res.body.toString(),
      /<soap:Value>soap:Receiver<\/soap:Value>.*Data at the root level is invalid\. Line 1, position 1\./,
    );
  });

  it('a SOAP char given as one letter is taken literally (decision 8)', async () => {
    const res = await rawRequest(server.url, {
      method: 'POST',
      path: '/NotificationNotes.asmx',
      headers: [
        ['Content-Type', 'text/xml; charset=utf-8'],
        ['SOAPAction', 'http://tempuri.org/GetStudentSchool'],
      ],
      body: env11('GetStudentSchool', '<school_base_url>x</school_base_url><show_active>Y</show_active>'),
    });
    assert.equal(res.status, 200);
    for (const bad of ['  ', '-1', '70000', 'YY', '😀']) {
      const r = await rawRequest(server.url, {
        method: 'POST',
        path: '/NotificationNotes.asmx',
        headers: [
          ['Content-Type', 'text/xml; charset=utf-8'],
          ['SOAPAction', 'http://tempuri.org/GetStudentSchool'],
        ],
        body: env11('GetStudentSchool', `<school_base_url>x</school_base_url><show_active>${bad}</show_active>`),
      });
      assert.equal(r.status, 500, `show_active ${JSON.stringify(bad)}`);
      assert.match(
        r.body.toString(),
        /<faultcode>soap:Client<\/faultcode><faultstring>Server was unable to read request\. ---&gt; There is an error in XML document \(1, \d+\)\. ---&gt; /,
      );
    }
  });

  it('a GET/POST value with a control character gets a clear error (decision 4)', async () => {
    const res = await rawRequest(server.url, {
      method: 'GET',
      path: '/PushNotificationMobile.asmx/GetTokenDevice?id=a%01b',
    });
    assert.equal(res.status, 500);
    assert.equal(res.headers.get('content-type'), 'text/plain; charset=utf-8');
    assert.match(res.body.toString(), /^Parameter id holds a character that XML 1\.0 does not allow; .*\r\n$/);
  });

  it('the service namespace drives element namespaces and SOAPAction values', async () => {
    const custom = await startTestServer({ dataset, env: { SIS_NAMESPACE: 'urn:school:sis' } });
    try {
      const body = env11('GetTokenDevice', '<id>1</id>').replace('http://tempuri.org/', 'urn:school:sis');
      const res = await rawRequest(custom.url, {
        method: 'POST',
        path: '/PushNotificationMobile.asmx',
        headers: [
          ['Content-Type', 'text/xml; charset=utf-8'],
          ['SOAPAction', '"urn:school:sis/GetTokenDevice"'],
        ],
        body,
      });
      assert.equal(res.status, 200);
      assert.match(
        res.body.toString(),
        /<GetTokenDeviceResponse xmlns="urn:school:sis"><GetTokenDeviceResult>tok-AAA-111</,
      );
      const get = await rawRequest(custom.url, {
        method: 'GET',
        path: '/PushNotificationMobile.asmx/GetTokenDevice?id=1',
      });
      assert.match(get.body.toString(), /<string xmlns="urn:school:sis">tok-AAA-111<\/string>/);
      const wsdl = await rawRequest(custom.url, { method: 'GET', path: '/PushNotificationMobile.asmx?wsdl' });
      assert.match(wsdl.body.toString(), /soapAction="urn:school:sis\/GetTokenDevice"/);
    } finally {
      await custom.close();
    }
  });

  it('a mustUnderstand header is refused before the operation runs: nothing is written', async () => {
    const header = '<soap:Header><Trace xmlns="urn:x" soap:mustUnderstand="1">t</Trace></soap:Header>';
    const res = await rawRequest(server.url, {
      method: 'POST',
      path: '/AuthCodeSending.asmx',
      headers: [
        ['Content-Type', 'text/xml; charset=utf-8'],
        ['SOAPAction', '"http://tempuri.org/AuthCode"'],
      ],
      body: env11('AuthCode', '<code>123456</code><phone>+15551234567</phone>', header),
    });
    assert.equal(res.status, 500);
    assert.match(
      res.body.toString(),
      /<faultcode>soap:MustUnderstand<\/faultcode><faultstring>SOAP header Trace was not understood\.<\/faultstring><\/soap:Fault>/,
    );
    const missing = await rawRequest(server.url, { method: 'GET', path: '/AuthCodeSending.asmx/AuthCode?code=1' });
    assert.equal(missing.status, 500);
    assert.equal(missing.body.toString(), 'Missing parameter: phone.\r\n');
    assert.deepEqual(sqliteRows(server.databaseFile, 'SELECT count(*) AS n FROM auth_codes'), [{ n: 0 }]);
  });
});

describe('an operation that fails', () => {
  const logs: string[] = [];
  let server: TestServer;
  let inner: SqlStore;
  before(async () => {
    inner = await openStore('sqlite::memory:');
    // A store whose queries fail with the kind of detail no caller may see.
    const broken = withOverrides(inner, {
      studentsOfSchool: () =>
        Promise.reject(new Error('SQLITE_CORRUPT: SELECT * FROM students at /var/lib/sis/secret.db')),
      studentsOfSchoolPages: () => ({
        [Symbol.asyncIterator]: () => ({
          next: () => Promise.reject(new Error('SQLITE_CORRUPT: SELECT * FROM students at /var/lib/sis/secret.db')),
        }),
      }),
      deviceToken: () => Promise.reject(new Error('connect ECONNREFUSED 10.0.0.5:5432 password=hunter2')),
      recordAuthCode: () => Promise.reject(new Error('INSERT INTO auth_codes failed')),
    });
    server = await startTestServer({
      store: broken,
      env: { LOG_LEVEL: 'error' },
      logDestination: new Writable({
        write(chunk: Buffer, _enc, cb) {
          logs.push(chunk.toString());
          cb();
        },
      }),
    });
  });
  after(() => server.close());

  const bindings = [
    {
      name: 'soap11',
      req: {
        method: 'POST',
        path: '/PushNotificationMobile.asmx',
        headers: [
          ['Content-Type', 'text/xml; charset=utf-8'],
          ['SOAPAction', '"http://tempuri.org/GetTokenDevice"'],
        ] as [string, string][],
        body: env11('GetTokenDevice', '<id>1</id>'),
      },
    },
    {
      name: 'soap12',
      req: {
        method: 'POST',
        path: '/PushNotificationMobile.asmx',
        headers: [['Content-Type', 'application/soap+xml; charset=utf-8']] as [string, string][],
        body: env11('GetTokenDevice', '<id>1</id>').replace(
          'http://schemas.xmlsoap.org/soap/envelope/',
          'http://www.w3.org/2003/05/soap-envelope',
        ),
      },
    },
    {
      name: 'httpget',
      req: {
        method: 'GET',
        path: '/PushNotificationMobile.asmx/GetTokenDevice?id=1',
        headers: [] as [string, string][],
      },
    },
    {
      name: 'httppost',
      req: {
        method: 'POST',
        path: '/PushNotificationMobile.asmx/GetTokenDevice',
        headers: [['Content-Type', 'application/x-www-form-urlencoded']] as [string, string][],
        body: 'id=1',
      },
    },
  ];
  for (const b of bindings) {
    it(`answers ${b.name} with a safe server error and logs the cause under the request id`, async () => {
      const res = await rawRequest(server.url, b.req);
      assert.equal(res.status, 500);
      assert.equal(res.headers.get('cache-control'), 'private, max-age=0');
      const body = res.body.toString();
      const safe = 'The service could not complete the request. The error has been logged.';
      if (b.name === 'soap11')
        assert.match(
          body,
          new RegExp(
            `<faultcode>soap:Server</faultcode><faultstring>Server was unable to process request\\. ---&gt; ${safe.replace(/\./g, '\\.')}</faultstring><detail />`,
          ),
        );
      else if (b.name === 'soap12') assert.match(body, /<soap:Value>soap:Receiver<\/soap:Value>/);
      else assert.equal(body, `${safe}\r\n`);
      assert.doesNotMatch(body, /ECONNREFUSED|password|5432|SELECT|\/var\/lib|at /);
      const id = res.headers.get('x-request-id');
      assert.ok(id);
      const line = logs.find((l) => l.includes(id));
      assert.ok(line, 'the failure is logged with the request id');
      assert.match(line, /ECONNREFUSED/);
    });
  }
});
