/**
 * "An operation is one entry", proven: a real server given test-only operations in a service file
 * of their own (ClassRegistry.asmx, test/helpers/class-registry.ts) beside the contract's, with no
 * other edit, routes them over the four bindings through the same binding loop as the contract's
 * (test/operations/operations.test.ts), and its gate and metrics know them; beside the legacy
 * service, the one that writes (ArchiveClass, `writes: true`) is never sent to it. The WSDL, disco
 * and help pages are in test/wire/metadata-extension.test.ts.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createClientAsync } from 'soap';
import { operations } from '../../src/operations/index.js';
import { bindingClients } from '../helpers/binding-clients.js';
import { missingCases, operationsOverEveryBinding } from '../helpers/binding-loop.js';
import {
  archived,
  CLASS_REGISTRY,
  CLASS_REGISTRY_CASES,
  classRegistry,
  EnrolPhone,
} from '../helpers/class-registry.js';
import { CONTRACT_CASES, CONTRACT_DATASET } from '../helpers/contract-cases.js';
import { rawRequest } from '../helpers/raw-http.js';
import { sqliteRows } from '../helpers/sqlite-file.js';
import { startTestServer } from '../helpers/test-server.js';
import type { TestServer } from '../helpers/test-server.js';

const served = [...operations, ...classRegistry];

operationsOverEveryBinding('the contract and ClassRegistry.asmx', {
  operations: served,
  cases: { ...CONTRACT_CASES, ...CLASS_REGISTRY_CASES },
  dataset: CONTRACT_DATASET,
});

describe('the binding loop with operations added', () => {
  it('names an operation served without cases, and cases for an operation not served', () => {
    assert.deepEqual(
      missingCases(served, CONTRACT_CASES),
      classRegistry.map((o) => `${CLASS_REGISTRY}.${o.name} has no binding case`),
    );
    assert.deepEqual(
      missingCases(operations, { ...CONTRACT_CASES, ...CLASS_REGISTRY_CASES }).sort(),
      classRegistry.map((o) => `cases for ${o.name}, which is not served`).sort(),
    );
  });
});

/** ListClasses('http://a.example', '8') in SOAP 1.1: the char as its UTF-16 code. */
const LIST_CLASSES_8 =
  '<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body>' +
  '<ListClasses xmlns="http://tempuri.org/"><school_base_url>http://a.example</school_base_url><grade>56</grade></ListClasses>' +
  '</soap:Body></soap:Envelope>';

describe('ClassRegistry.asmx behind the gate, with no other edit', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({
      operations: served,
      // Keys required for every service file: the gate's list of service files comes from the operations.
      env: { SIS_API_KEYS: `sha256:${'ab'.repeat(32)}` },
    });
  });
  after(() => server.close());

  it('is behind the API key like the contract service files', async () => {
    for (const path of [
      `/${CLASS_REGISTRY}.asmx/GetClassTitle?class_id=7A`,
      '/PushNotificationMobile.asmx/GetTokenDevice?id=1',
    ]) {
      const res = await rawRequest(server.url, { method: 'GET', path });
      assert.equal(res.status, 401, path);
    }
  });
});

describe('ClassRegistry.asmx routing and metrics, with no other edit', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ operations: served });
  });
  after(() => server.close());

  it('SOAP 1.1 without SOAPAction is routed by the body element', async () => {
    const res = await rawRequest(server.url, {
      method: 'POST',
      path: `/${CLASS_REGISTRY}.asmx`,
      headers: [['Content-Type', 'text/xml; charset=utf-8']],
      body: LIST_CLASSES_8,
    });
    assert.equal(res.status, 200);
    assert.match(res.body.toString(), /<ListClassesResult><ClassInfo><id>8A<\/id>/);
  });

  it('the service file name matches case-insensitively, operation names do not', async () => {
    const ok = await rawRequest(server.url, { method: 'GET', path: '/classregistry.ASMX/GetClassTitle?class_id=8A' });
    assert.equal(ok.status, 200);
    assert.match(ok.body.toString(), /<string xmlns="http:\/\/tempuri.org\/">علي<\/string>/);
    const wrongCase = await rawRequest(server.url, {
      method: 'GET',
      path: `/${CLASS_REGISTRY}.asmx/getclasstitle?class_id=8A`,
    });
    assert.equal(wrongCase.status, 500);
  });

  it('an operation of another service file is not found in it', async () => {
    const res = await rawRequest(server.url, { method: 'GET', path: `/${CLASS_REGISTRY}.asmx/GetTokenDevice?id=1` });
    assert.equal(res.status, 500);
    assert.match(res.body.toString(), /GetTokenDevice/);
  });

  it('/metrics counts its requests by service file, operation and binding', async () => {
    const counted = async (): Promise<number> => {
      const metrics = (await rawRequest(server.url, { method: 'GET', path: '/metrics' })).body.toString();
      const line = `sis_requests_total{service="${CLASS_REGISTRY}",operation="ArchiveClass",binding="httppost",status="200"} `;
      const at = metrics.indexOf(line);
      return at < 0 ? 0 : Number.parseInt(metrics.slice(at + line.length), 10);
    };
    const before = await counted();
    const res = await rawRequest(server.url, {
      method: 'POST',
      path: `/${CLASS_REGISTRY}.asmx/ArchiveClass`,
      headers: [['Content-Type', 'application/x-www-form-urlencoded']],
      body: 'class_id=metrics',
    });
    assert.equal(res.status, 200);
    assert.equal(await counted(), before + 1);
  });
});

const XML_DECL = '<?xml version="1.0" encoding="utf-8"?>';
const soapCall = (op: string, params: string): string =>
  `${XML_DECL}<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body>` +
  `<${op} xmlns="http://tempuri.org/">${params}</${op}></soap:Body></soap:Envelope>`;

describe('an int and a boolean operation, from the table of simple types alone', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ operations: served });
  });
  after(() => server.close());

  const get = async (path: string): Promise<{ status: number; body: string }> => {
    const res = await rawRequest(server.url, { method: 'GET', path });
    return { status: res.status, body: res.body.toString('utf8') };
  };
  const soap = async (op: string, params: string): Promise<{ status: number; body: string }> => {
    const res = await rawRequest(server.url, {
      method: 'POST',
      path: `/${CLASS_REGISTRY}.asmx`,
      headers: [['Content-Type', 'text/xml; charset=utf-8']],
      body: soapCall(op, params),
    });
    return { status: res.status, body: res.body.toString('utf8') };
  };

  it('answers in the bytes XmlSerializer writes: the type as the GET/POST root, the value in XmlConvert form', async () => {
    const count = await get(`/${CLASS_REGISTRY}.asmx/CountClasses?school_base_url=http://a.example&from_grade=8`);
    assert.equal(count.body, `${XML_DECL}\n<int xmlns="http://tempuri.org/">1</int>`);
    const has = await get(`/${CLASS_REGISTRY}.asmx/HasClass?class_id=7B&with_teacher=True`);
    assert.equal(has.body, `${XML_DECL}\n<boolean xmlns="http://tempuri.org/">false</boolean>`);
    const soapCount = await soap(
      'CountClasses',
      '<school_base_url>http://a.example</school_base_url><from_grade> 7 </from_grade>',
    );
    assert.ok(
      soapCount.body.includes(
        '<CountClassesResponse xmlns="http://tempuri.org/"><CountClassesResult>4</CountClassesResult></CountClassesResponse>',
      ),
    );
    // XmlConvert reads 1 as true; a boolean left out is .NET's default, false.
    const soapHas = await soap('HasClass', '<class_id>7B</class_id><with_teacher>1</with_teacher>');
    assert.ok(soapHas.body.includes('<HasClassResult>false</HasClassResult>'), soapHas.body);
    const soapDefault = await soap('HasClass', '<class_id>7B</class_id>');
    assert.ok(soapDefault.body.includes('<HasClassResult>true</HasClassResult>'), soapDefault.body);
  });

  it("refuses a value that does not convert with ASMX's messages: GET/POST as Convert.ChangeType, SOAP as XmlConvert", async () => {
    const badInt = await get(`/${CLASS_REGISTRY}.asmx/CountClasses?school_base_url=x&from_grade=7.5`);
    assert.equal(badInt.status, 500);
    assert.equal(
      badInt.body,
      'Cannot convert 7.5 to System.Int32.\r\nParameter name: type ---> Input string was not in a correct format.\r\n',
    );
    const bigInt = await get(`/${CLASS_REGISTRY}.asmx/CountClasses?school_base_url=x&from_grade=2147483648`);
    assert.match(bigInt.body, /---> Value was either too large or too small for an Int32\.\r\n$/);
    // Boolean.Parse knows True and False only; XmlConvert's 1 is not one of them.
    const badBool = await get(`/${CLASS_REGISTRY}.asmx/HasClass?class_id=7A&with_teacher=1`);
    assert.equal(
      badBool.body,
      'Cannot convert 1 to System.Boolean.\r\nParameter name: type ---> String was not recognized as a valid Boolean.\r\n',
    );
    const soapInt = await soap('CountClasses', '<school_base_url>x</school_base_url><from_grade>seven</from_grade>');
    assert.equal(soapInt.status, 500);
    assert.match(
      soapInt.body,
      /<faultcode>soap:Client<\/faultcode><faultstring>Server was unable to read request\. ---&gt; There is an error in XML document \(1, \d+\)\. ---&gt; Input string was not in a correct format\.<\/faultstring>/,
    );
    const soapBool = await soap('HasClass', '<class_id>7A</class_id><with_teacher>yes</with_teacher>');
    assert.match(soapBool.body, /---&gt; The string 'yes' is not a valid Boolean value\.<\/faultstring>/);
  });

  it('the WSDL types them as value types: always present, never nil, s:string on the HTTP ports', async () => {
    const wsdl = (await get(`/${CLASS_REGISTRY}.asmx?WSDL`)).body;
    for (const line of [
      '<s:element minOccurs="1" maxOccurs="1" name="from_grade" type="s:int" />',
      '<s:element minOccurs="1" maxOccurs="1" name="CountClassesResult" type="s:int" />',
      '<s:element minOccurs="1" maxOccurs="1" name="with_teacher" type="s:boolean" />',
      '<s:element minOccurs="1" maxOccurs="1" name="HasClassResult" type="s:boolean" />',
      '<s:element name="int" type="s:int" />',
      '<s:element name="boolean" type="s:boolean" />',
      '<wsdl:message name="CountClassesHttpGetIn">\n    <wsdl:part name="school_base_url" type="s:string" />\n    <wsdl:part name="from_grade" type="s:string" />',
      '<wsdl:message name="CountClassesHttpGetOut">\n    <wsdl:part name="Body" element="tns:int" />',
      '<wsdl:message name="HasClassHttpPostOut">\n    <wsdl:part name="Body" element="tns:boolean" />',
    ]) {
      assert.ok(wsdl.includes(line), line);
    }
  });

  it("the help pages show each type by its name, as .NET's samples do; HTTP parameters as string", async () => {
    const value = (v: string): string => `<span class="value">${v}</span>`;
    const count = (await get(`/${CLASS_REGISTRY}.asmx?op=CountClasses`)).body;
    assert.ok(count.includes(`&lt;from_grade&gt;${value('int')}&lt;/from_grade&gt;`));
    assert.ok(count.includes(`&lt;CountClassesResult&gt;${value('int')}&lt;/CountClassesResult&gt;`));
    assert.ok(count.includes(`&lt;int xmlns=&quot;http://tempuri.org/&quot;&gt;${value('int')}&lt;/int&gt;</pre>`));
    assert.ok(count.includes(`&amp;from_grade=${value('string')} HTTP/1.1`));
    const has = (await get(`/${CLASS_REGISTRY}.asmx?op=HasClass`)).body;
    assert.ok(has.includes('<tr><td>with_teacher</td><td>boolean</td><td>count only a class with a teacher</td></tr>'));
    assert.ok(
      has.includes('<p>A boolean is True or False (in any case) in HTTP GET and POST, and true, false, 1 or 0'),
    );
    assert.ok(has.includes(`&lt;HasClassResult&gt;${value('boolean')}&lt;/HasClassResult&gt;`));
    assert.ok(
      has.includes(`&lt;boolean xmlns=&quot;http://tempuri.org/&quot;&gt;${value('boolean')}&lt;/boolean&gt;</pre>`),
    );
  });

  it('node-soap, built from the live WSDL, sends and reads them typed over both SOAP ports', async () => {
    for (const [port, forceSoap12Headers] of [
      ['Soap', false],
      ['Soap12', true],
    ] as const) {
      const client = await createClientAsync(`${server.url}/${CLASS_REGISTRY}.asmx?WSDL`, { forceSoap12Headers });
      const ports = client[CLASS_REGISTRY] as Record<string, Record<string, (args: object) => unknown>> | undefined;
      const call = async (op: string, args: object): Promise<unknown> => {
        const fn = ports?.[`${CLASS_REGISTRY}${port}`]?.[op];
        assert.equal(typeof fn, 'function', `${port}.${op} built from the WSDL`);
        return new Promise((resolve, reject) => {
          (fn as (a: object, cb: (err: unknown, result: unknown) => void) => void)(args, (err, result) =>
            err ? reject(err instanceof Error ? err : new Error(String(err))) : resolve(result),
          );
        });
      };
      assert.deepEqual(await call('CountClasses', { school_base_url: 'http://a.example', from_grade: 8 }), {
        CountClassesResult: 1,
      });
      assert.deepEqual(await call('HasClass', { class_id: '7A', with_teacher: true }), { HasClassResult: true });
      assert.deepEqual(await call('HasClass', { class_id: '7B', with_teacher: true }), { HasClassResult: false });
    }
  });
});

describe('ClassRegistry.asmx beside the legacy service (SIS_SHADOW=compare), with no other edit', () => {
  it('never sends the operation that writes to the legacy service, over any binding; its reads are compared', async () => {
    // A legacy service that records what it is sent and answers 200 to everything.
    const sent: string[] = [];
    const legacy = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        sent.push(`${req.method} ${req.url} ${Buffer.concat(chunks).toString('utf8')}`);
        res.writeHead(200, { 'Content-Type': 'text/plain' }).end('ok');
      });
    });
    await new Promise<void>((resolve) => legacy.listen(0, '127.0.0.1', resolve));
    const server = await startTestServer({
      operations: served,
      env: {
        SIS_SHADOW: 'compare',
        SIS_LEGACY_URL: `http://127.0.0.1:${(legacy.address() as AddressInfo).port}/`,
        SIS_SHADOW_TIMEOUT_MS: '2000',
        // The read differs from this legacy's answer: asked once, not rechecked, so `sent` is exact.
        SIS_SHADOW_RECHECK: 'off',
      },
    });
    try {
      const path = `/${CLASS_REGISTRY}.asmx`;
      const call = (op: string, params: string): string => soapCall(op, params);
      const soap12 = (op: string, params: string): string =>
        call(op, params).replace(
          'http://schemas.xmlsoap.org/soap/envelope/',
          'http://www.w3.org/2003/05/soap-envelope',
        );
      const requests = [
        {
          method: 'POST',
          path,
          headers: [
            ['Content-Type', 'text/xml; charset=utf-8'],
            ['SOAPAction', '"http://tempuri.org/ArchiveClass"'],
          ] as [string, string][],
          body: call('ArchiveClass', '<class_id>shadow-soap11</class_id>'),
        },
        {
          method: 'POST',
          path,
          headers: [['Content-Type', 'application/soap+xml; charset=utf-8']] as [string, string][],
          body: soap12('ArchiveClass', '<class_id>shadow-soap12</class_id>'),
        },
        { method: 'GET', path: `${path}/ArchiveClass?class_id=shadow-httpget` },
        {
          method: 'POST',
          path: `${path}/ArchiveClass`,
          headers: [['Content-Type', 'application/x-www-form-urlencoded']] as [string, string][],
          body: 'class_id=shadow-httppost',
        },
        // Reads of the same file, over GET and both SOAP versions (1.2 without its action, routed
        // by the body): sent on and compared like any read, so the legacy service is seen to be asked.
        { method: 'GET', path: `${path}/GetClassTitle?class_id=7A` },
        {
          method: 'POST',
          path,
          headers: [
            ['Content-Type', 'text/xml; charset=utf-8'],
            ['SOAPAction', '"http://tempuri.org/GetClassTitle"'],
          ] as [string, string][],
          body: call('GetClassTitle', '<class_id>7B</class_id>'),
        },
        {
          method: 'POST',
          path,
          headers: [['Content-Type', 'application/soap+xml; charset=utf-8']] as [string, string][],
          body: soap12('GetClassTitle', '<class_id>8A</class_id>'),
        },
      ];
      for (const r of requests) assert.equal((await rawRequest(server.url, r)).status, 200, `${r.method} ${r.path}`);
      // Stopping waits for the comparisons in progress.
      await server.app.close();
      for (const binding of ['soap11', 'soap12', 'httpget', 'httppost'])
        assert.equal(archived.filter((id) => id === `shadow-${binding}`).length, 1, `ours ran it once (${binding})`);
      assert.deepEqual(sent, [
        `GET /${CLASS_REGISTRY}.asmx/GetClassTitle?class_id=7A `,
        `POST /${CLASS_REGISTRY}.asmx ${requests[5]!.body}`,
        `POST /${CLASS_REGISTRY}.asmx ${requests[6]!.body}`,
      ]);
    } finally {
      await server.close();
      await new Promise<void>((resolve) => legacy.close(() => resolve()));
    }
  });
});

describe('a writing operation that forgets dryRun, beside the legacy service (SIS_SHADOW=legacy)', () => {
  it('fails in the dry run instead of writing: neither our database nor the outbox changes, over any binding', async () => {
    // A legacy service that takes every request (it does the writes) and answers void: in SOAP, an
    // empty response element; over GET and POST, nothing.
    const sent: string[] = [];
    const legacy = createServer((req, res) => {
      req.resume().on('end', () => {
        sent.push(`${req.method} ${req.url}`);
        if (req.url?.endsWith('.asmx') !== true) return void res.writeHead(200).end();
        res
          .writeHead(200, { 'Content-Type': 'text/xml; charset=utf-8' })
          .end(
            soapCall('EnrolPhone', '').replace(
              '<EnrolPhone xmlns="http://tempuri.org/"></EnrolPhone>',
              '<EnrolPhoneResponse xmlns="http://tempuri.org/" />',
            ),
          );
      });
    });
    await new Promise<void>((resolve) => legacy.listen(0, '127.0.0.1', resolve));
    const server = await startTestServer({
      operations: [...served, EnrolPhone],
      env: {
        SIS_SHADOW: 'legacy',
        SIS_LEGACY_URL: `http://127.0.0.1:${(legacy.address() as AddressInfo).port}/`,
        SIS_SHADOW_TIMEOUT_MS: '2000',
      },
    });
    try {
      const op = EnrolPhone;
      for (const client of bindingClients) {
        const { res } = await client.call(server.url, op, { class_id: `7A-${client.name}`, phone: '+15557654321' });
        assert.equal(res.status, 200, `${client.name}: the legacy's answer`);
      }
      // Stopping waits for the comparisons in progress: ours has run (and failed) by then.
      await server.app.close();
      assert.equal(sent.length, 4, 'the legacy service took every request');
      for (const table of ['auth_codes', 'outbox']) {
        assert.deepEqual(sqliteRows(server.databaseFile, `select count(*) as n from ${table}`), [{ n: 0 }], table);
      }
    } finally {
      await server.close();
      await new Promise<void>((resolve) => legacy.close(() => resolve()));
    }
  });
});
