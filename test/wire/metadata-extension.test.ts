/**
 * Metadata comes from the contract only: a real server given a service file of test-only
 * operations (ClassRegistry.asmx: a list of a struct from a string and a char, the struct, a string
 * and a void one; test/helpers/class-registry.ts) serves them in its WSDL, disco and help pages over
 * HTTP with no other edit, and every other service's documents stay byte for byte as they were.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SaxesParser } from 'saxes';
import { operations, services } from '../../src/operations/index.js';
import { CLASS_REGISTRY, classRegistry } from '../helpers/class-registry.js';
import { rawRequest } from '../helpers/raw-http.js';
import { startTestServer } from '../helpers/test-server.js';
import type { TestServer } from '../helpers/test-server.js';

const wrapper = (name: string, inner: string[]): string[] =>
  inner.length === 0
    ? [`      <s:element name="${name}">`, '        <s:complexType />', '      </s:element>']
    : [
        `      <s:element name="${name}">`,
        '        <s:complexType>',
        '          <s:sequence>',
        ...inner.map((l) => `            ${l}`),
        '          </s:sequence>',
        '        </s:complexType>',
        '      </s:element>',
      ];
const str = (name: string): string => `<s:element minOccurs="0" maxOccurs="1" name="${name}" type="s:string" />`;
const complexType = (name: string, inner: string[]): string[] => [
  `      <s:complexType name="${name}">`,
  '        <s:sequence>',
  ...inner.map((l) => `          ${l}`),
  '        </s:sequence>',
  '      </s:complexType>',
];

/** Written by hand from XmlSchemaExporter's rules: types where first met, HTTP globals last, each once. */
const expectedTypes = [
  '  <wsdl:types>',
  '    <s:schema elementFormDefault="qualified" targetNamespace="http://tempuri.org/">',
  '      <s:import namespace="http://microsoft.com/wsdl/types/" />',
  ...wrapper('GetClassInfo', [str('class_id')]),
  ...wrapper('GetClassInfoResponse', [
    '<s:element minOccurs="0" maxOccurs="1" name="GetClassInfoResult" type="tns:ClassInfo" />',
  ]),
  ...complexType('ClassInfo', [str('id'), str('title'), str('teacher')]),
  ...wrapper('ListClasses', [
    str('school_base_url'),
    '<s:element minOccurs="1" maxOccurs="1" name="grade" type="s1:char" />',
  ]),
  ...wrapper('ListClassesResponse', [
    '<s:element minOccurs="0" maxOccurs="1" name="ListClassesResult" type="tns:ArrayOfClassInfo" />',
  ]),
  ...complexType('ArrayOfClassInfo', [
    '<s:element minOccurs="0" maxOccurs="unbounded" name="ClassInfo" nillable="true" type="tns:ClassInfo" />',
  ]),
  ...wrapper('GetClassTitle', [str('class_id')]),
  ...wrapper('GetClassTitleResponse', [str('GetClassTitleResult')]),
  ...wrapper('ArchiveClass', [str('class_id')]),
  ...wrapper('ArchiveClassResponse', []),
  '      <s:element name="ClassInfo" nillable="true" type="tns:ClassInfo" />',
  '      <s:element name="ArrayOfClassInfo" nillable="true" type="tns:ArrayOfClassInfo" />',
  '      <s:element name="string" nillable="true" type="s:string" />',
  '    </s:schema>',
  '    <s:schema elementFormDefault="qualified" targetNamespace="http://microsoft.com/wsdl/types/">',
  '      <s:simpleType name="char">',
  '        <s:restriction base="s:unsignedShort" />',
  '      </s:simpleType>',
  '    </s:schema>',
  '  </wsdl:types>',
].join('\n');

const count = (text: string, part: string): number => text.split(part).length - 1;

async function get(server: TestServer, path: string): Promise<string> {
  const res = await rawRequest(server.url, { method: 'GET', path });
  assert.equal(res.status, 200, `GET ${path}`);
  return res.body.toString('utf8');
}

describe('a sixth service file in the WSDL, disco and help pages of a real server', () => {
  let plain: TestServer;
  let added: TestServer;
  /** Served with the first ClassRegistry operation only, to see that later ones only add. */
  let first: TestServer;
  let wsdl: string;
  before(async () => {
    plain = await startTestServer();
    added = await startTestServer({ operations: [...operations, ...classRegistry] });
    first = await startTestServer({ operations: [...operations, classRegistry[0]!] });
    wsdl = await get(added, `/${CLASS_REGISTRY}.asmx?WSDL`);
  });
  after(async () => {
    await plain.close();
    await added.close();
    await first.close();
  });

  it('is served only when given: the plain server has no such file', async () => {
    const res = await rawRequest(plain.url, { method: 'GET', path: `/${CLASS_REGISTRY}.asmx?WSDL` });
    assert.equal(res.status, 404);
  });

  it('WSDL types: wrappers, struct and array types once, HTTP globals last', () => {
    const start = wsdl.indexOf('  <wsdl:types>');
    const end = wsdl.indexOf('  </wsdl:types>') + '  </wsdl:types>'.length;
    assert.equal(wsdl.slice(start, end), expectedTypes);
    assert.ok(wsdl.includes(' xmlns:tns="http://tempuri.org/" xmlns:s1="http://microsoft.com/wsdl/types/" xmlns:s='));
  });

  it('WSDL messages, port types and the four bindings', () => {
    assert.doesNotThrow(() => new SaxesParser({ xmlns: true }).write(wsdl).close());
    for (const op of classRegistry) {
      assert.equal(count(wsdl, `<wsdl:operation name="${op.name}">`), 7, `${op.name}: 3 portTypes + 4 bindings`);
      assert.equal(count(wsdl, `soapAction="http://tempuri.org/${op.name}"`), 2);
      assert.equal(count(wsdl, `<http:operation location="/${op.name}" />`), 2);
      for (const m of ['SoapIn', 'SoapOut', 'HttpGetIn', 'HttpGetOut', 'HttpPostIn', 'HttpPostOut']) {
        assert.equal(count(wsdl, `<wsdl:message name="${op.name}${m}"`), 1, op.name + m);
        assert.equal(count(wsdl, `message="tns:${op.name}${m}"`), 1, op.name + m);
      }
    }
    for (const binding of ['Soap', 'Soap12', 'HttpGet', 'HttpPost']) {
      // SOAP 1.1 and 1.2 share one port type.
      const portType = binding === 'Soap12' ? 'Soap' : binding;
      assert.equal(
        count(wsdl, `<wsdl:binding name="${CLASS_REGISTRY}${binding}" type="tns:${CLASS_REGISTRY}${portType}">`),
        1,
        binding,
      );
      assert.equal(
        count(wsdl, `<wsdl:port name="${CLASS_REGISTRY}${binding}" binding="tns:${CLASS_REGISTRY}${binding}">`),
        1,
        binding,
      );
    }
    assert.ok(
      wsdl.includes(
        '<wsdl:message name="ListClassesHttpGetIn">\n    <wsdl:part name="school_base_url" type="s:string" />\n    <wsdl:part name="grade" type="s:string" />',
      ),
    );
    assert.ok(
      wsdl.includes(
        '<wsdl:message name="GetClassInfoHttpPostOut">\n    <wsdl:part name="Body" element="tns:ClassInfo" />',
      ),
    );
    assert.ok(
      wsdl.includes(
        '<wsdl:message name="ListClassesHttpGetOut">\n    <wsdl:part name="Body" element="tns:ArrayOfClassInfo" />',
      ),
    );
    assert.ok(wsdl.includes('<wsdl:message name="ArchiveClassHttpGetOut" />'));
    // Messages stay grouped: every SOAP one before the first HTTP GET one.
    assert.ok(wsdl.indexOf('name="ArchiveClassSoapOut"') < wsdl.indexOf('name="GetClassInfoHttpGetIn"'));
    assert.equal(count(wsdl, '<wsdl:port '), 4);
  });

  it('WSDL: an operation added after another leaves what was written before it as it was', async () => {
    const before = await get(first, `/${CLASS_REGISTRY}.asmx?WSDL`);
    const portType = (x: string): string => x.slice(x.indexOf('<wsdl:portType'), x.indexOf('  </wsdl:portType>'));
    assert.ok(portType(wsdl).startsWith(portType(before)));
    assert.notEqual(portType(wsdl), portType(before));
  });

  it('the other service files answer their documents byte for byte as without it', async () => {
    const portOf = (server: TestServer): string => new URL(server.url).port;
    for (const service of services) {
      for (const path of [
        `/${service.name}.asmx?WSDL`,
        `/${service.name}.asmx?disco`,
        `/${service.name}.asmx`,
        `/${service.name}.asmx?op=${service.operations[0]!.name}`,
      ]) {
        const mine = (await get(added, path)).replaceAll(portOf(added), 'PORT');
        assert.equal(mine, (await get(plain, path)).replaceAll(portOf(plain), 'PORT'), path);
      }
    }
  });

  it('disco names its SOAP bindings, as any service file', async () => {
    const disco = await get(added, `/${CLASS_REGISTRY}.asmx?disco`);
    const other = await get(added, '/PushNotificationMobile.asmx?disco');
    assert.equal(disco, other.replaceAll('PushNotificationMobile', CLASS_REGISTRY));
    assert.equal(count(disco, `binding="q1:${CLASS_REGISTRY}Soap"`), 1);
    assert.equal(count(disco, `binding="q2:${CLASS_REGISTRY}Soap12"`), 1);
  });

  it('the service help page lists every operation with its doc, in order', async () => {
    const page = await get(added, `/${CLASS_REGISTRY}.asmx`);
    let last = -1;
    for (const op of classRegistry) {
      const at = page.indexOf(
        `<li><a href="/${CLASS_REGISTRY}.asmx?op=${op.name}">${op.name}</a><br>${op.doc.replaceAll("'", '&#39;')}</li>`,
      );
      assert.ok(at > last, `${op.name} listed, in declaration order`);
      last = at;
    }
  });

  it('?op= pages show samples for the four bindings and the test form', async () => {
    const field = (name: string, indent: string): string =>
      `${indent}&lt;${name}&gt;<span class="value">string</span>&lt;/${name}&gt;`;
    for (const op of classRegistry) {
      const page = await get(added, `/${CLASS_REGISTRY}.asmx?op=${op.name}`);
      assert.ok(page.includes(`<h2>${op.name}</h2>`));
      for (const title of ['SOAP 1.1', 'SOAP 1.2', 'HTTP GET', 'HTTP POST']) {
        assert.ok(
          page.includes(`>${title}</h3>\n<p>The following is a sample ${title} request and response.`),
          `${op.name}: ${title}`,
        );
      }
      assert.ok(page.includes(`SOAPAction: &quot;http://tempuri.org/${op.name}&quot;`));
      assert.ok(
        page.includes(`<form method="post" action="/${CLASS_REGISTRY}.asmx/${op.name}" target="_blank">`),
        `${op.name}: test form`,
      );
    }

    const struct = await get(added, `/${CLASS_REGISTRY}.asmx?op=GetClassInfo`);
    assert.ok(
      struct.includes(
        `&lt;GetClassInfoResult&gt;\n${field('id', '        ')}\n${field('title', '        ')}\n${field('teacher', '        ')}\n`,
      ),
    );
    assert.ok(struct.includes(`&lt;ClassInfo xmlns=&quot;http://tempuri.org/&quot;&gt;\n${field('id', '  ')}\n`));

    const list = await get(added, `/${CLASS_REGISTRY}.asmx?op=ListClasses`);
    assert.ok(list.includes('&lt;grade&gt;<span class="value">char</span>&lt;/grade&gt;'));
    assert.ok(
      list.includes(
        `GET /${CLASS_REGISTRY}.asmx/ListClasses?school_base_url=<span class="value">string</span>&amp;grade=<span class="value">string</span> HTTP/1.1`,
      ),
    );
    assert.ok(list.includes('&lt;ArrayOfClassInfo xmlns=&quot;http://tempuri.org/&quot;&gt;\n  &lt;ClassInfo&gt;\n'));
    assert.equal(count(list, '&lt;ClassInfo&gt;'), 8, 'two items in each of four answers');

    const title = await get(added, `/${CLASS_REGISTRY}.asmx?op=GetClassTitle`);
    assert.ok(
      title.includes(
        '&lt;string xmlns=&quot;http://tempuri.org/&quot;&gt;<span class="value">string</span>&lt;/string&gt;</pre>',
      ),
    );

    const archive = await get(added, `/${CLASS_REGISTRY}.asmx?op=ArchiveClass`);
    assert.ok(archive.includes('&lt;ArchiveClassResponse xmlns=&quot;http://tempuri.org/&quot; /&gt;'));
    assert.equal(count(archive, '<pre>HTTP/1.1 200 OK</pre>'), 2, 'no body for void in GET and POST');
  });
});
