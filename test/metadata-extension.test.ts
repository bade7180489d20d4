/**
 * Metadata comes from the contract only: a service given extra operations (a struct result, a
 * list of the same struct, a string and a void one) shows them in the WSDL, the disco and the help
 * pages with no other edit.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SaxesParser } from 'saxes';
import { defineOperation } from '../src/contract/define.js';
import type { ServiceSpec, StructSpec } from '../src/contract/types.js';
import { renderDisco } from '../src/metadata/disco.js';
import { renderOperationHelp, renderServiceHelp } from '../src/metadata/help-page.js';
import { renderWsdl } from '../src/metadata/wsdl.js';
import { services } from '../src/operations/index.js';

const TEMPURI = 'http://tempuri.org/';
const ADDRESS = 'http://localhost:8080/PushNotificationMobile.asmx';

const ClassInfo = { name: 'ClassInfo', fields: ['id', 'title'] } as const satisfies StructSpec;

const extra = [
  defineOperation({
    service: 'PushNotificationMobile',
    name: 'GetClassInfo',
    doc: 'One class.',
    params: [{ name: 'class_id', type: 'string', doc: 'the class' }],
    result: { kind: 'struct', struct: ClassInfo },
    async run() {
      return null;
    },
  }),
  defineOperation({
    service: 'PushNotificationMobile',
    name: 'ListClasses',
    doc: 'Classes with a flag.',
    params: [{ name: 'flag', type: 'char', doc: 'the flag' }],
    result: { kind: 'list', item: ClassInfo },
    async run() {
      return [];
    },
  }),
  defineOperation({
    service: 'PushNotificationMobile',
    name: 'Echo',
    doc: 'Echoes.',
    params: [{ name: 'text', type: 'string', doc: 'what to echo' }],
    result: { kind: 'string' },
    async run(args) {
      return args.text;
    },
  }),
  defineOperation({
    service: 'PushNotificationMobile',
    name: 'Ping',
    doc: 'Nothing.',
    params: [],
    result: { kind: 'void' },
    async run() {},
  }),
];

const base = services.find((s) => s.name === 'PushNotificationMobile')!;
const extended: ServiceSpec<unknown> = { name: base.name, operations: [...base.operations, ...extra] };

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
  ...wrapper('GetTokenDevice', [str('id')]),
  ...wrapper('GetTokenDeviceResponse', [str('GetTokenDeviceResult')]),
  ...wrapper('GetServerKeyAndSender', []),
  ...wrapper('GetServerKeyAndSenderResponse', []),
  ...wrapper('GetClassInfo', [str('class_id')]),
  ...wrapper('GetClassInfoResponse', [
    '<s:element minOccurs="0" maxOccurs="1" name="GetClassInfoResult" type="tns:ClassInfo" />',
  ]),
  ...complexType('ClassInfo', [str('id'), str('title')]),
  ...wrapper('ListClasses', ['<s:element minOccurs="1" maxOccurs="1" name="flag" type="s1:char" />']),
  ...wrapper('ListClassesResponse', [
    '<s:element minOccurs="0" maxOccurs="1" name="ListClassesResult" type="tns:ArrayOfClassInfo" />',
  ]),
  ...complexType('ArrayOfClassInfo', [
    '<s:element minOccurs="0" maxOccurs="unbounded" name="ClassInfo" nillable="true" type="tns:ClassInfo" />',
  ]),
  ...wrapper('Echo', [str('text')]),
  ...wrapper('EchoResponse', [str('EchoResult')]),
  ...wrapper('Ping', []),
  ...wrapper('PingResponse', []),
  '      <s:element name="string" nillable="true" type="s:string" />',
  '      <s:element name="ClassInfo" nillable="true" type="tns:ClassInfo" />',
  '      <s:element name="ArrayOfClassInfo" nillable="true" type="tns:ArrayOfClassInfo" />',
  '    </s:schema>',
  '    <s:schema elementFormDefault="qualified" targetNamespace="http://microsoft.com/wsdl/types/">',
  '      <s:simpleType name="char">',
  '        <s:restriction base="s:unsignedShort" />',
  '      </s:simpleType>',
  '    </s:schema>',
  '  </wsdl:types>',
].join('\n');

const count = (text: string, part: string): number => text.split(part).length - 1;

describe('a service with extra operations', () => {
  const wsdl = renderWsdl(extended, TEMPURI, ADDRESS);

  it('WSDL types: wrappers, struct and array types once, HTTP globals last', () => {
    const start = wsdl.indexOf('  <wsdl:types>');
    const end = wsdl.indexOf('  </wsdl:types>') + '  </wsdl:types>'.length;
    assert.equal(wsdl.slice(start, end), expectedTypes);
    assert.ok(wsdl.includes(' xmlns:tns="http://tempuri.org/" xmlns:s1="http://microsoft.com/wsdl/types/" xmlns:s='));
  });

  it('WSDL messages, portTypes, bindings', () => {
    assert.doesNotThrow(() => new SaxesParser({ xmlns: true }).write(wsdl).close());
    for (const op of extended.operations) {
      assert.equal(count(wsdl, `<wsdl:operation name="${op.name}">`), 7, `${op.name}: 3 portTypes + 4 bindings`);
      assert.equal(count(wsdl, `soapAction="http://tempuri.org/${op.name}"`), 2);
      assert.equal(count(wsdl, `<http:operation location="/${op.name}" />`), 2);
      for (const m of ['SoapIn', 'SoapOut', 'HttpGetIn', 'HttpGetOut', 'HttpPostIn', 'HttpPostOut']) {
        assert.equal(count(wsdl, `<wsdl:message name="${op.name}${m}"`), 1, op.name + m);
        assert.equal(count(wsdl, `message="tns:${op.name}${m}"`), 1, op.name + m);
      }
    }
    const getIn = '<wsdl:message name="ListClassesHttpGetIn">\n    <wsdl:part name="flag" type="s:string" />';
    assert.ok(wsdl.includes(getIn));
    assert.ok(wsdl.includes('<wsdl:message name="GetClassInfoHttpPostOut">\n    <wsdl:part name="Body" element="tns:ClassInfo" />'));
    assert.ok(wsdl.includes('<wsdl:message name="ListClassesHttpGetOut">\n    <wsdl:part name="Body" element="tns:ArrayOfClassInfo" />'));
    assert.ok(wsdl.includes('<wsdl:message name="PingHttpGetIn" />\n  <wsdl:message name="PingHttpGetOut" />'));
    // Messages stay grouped: every SOAP one before the first HTTP GET one.
    assert.ok(wsdl.indexOf('name="PingSoapOut"') < wsdl.indexOf('name="GetTokenDeviceHttpGetIn"'));
    assert.equal(count(wsdl, '<wsdl:port '), 4);
    // The base operations are written exactly as before, only more follow them.
    const baseWsdl = renderWsdl(base, TEMPURI, ADDRESS);
    const portType = (x: string): string => x.slice(x.indexOf('<wsdl:portType'), x.indexOf('  </wsdl:portType>'));
    assert.ok(portType(wsdl).startsWith(portType(baseWsdl)));
  });

  it('disco names the SOAP bindings only, so it stays as it was', () => {
    assert.equal(renderDisco(extended, TEMPURI, ADDRESS), renderDisco(base, TEMPURI, ADDRESS));
  });

  it('help pages list and describe the new operations', () => {
    const opts = { namespace: TEMPURI, path: '/PushNotificationMobile.asmx', host: 'localhost', showTestForm: true };
    const list = renderServiceHelp(extended, opts);
    for (const op of extended.operations) assert.ok(list.includes(`?op=${op.name}">${op.name}</a><br>${op.doc}</li>`));

    const struct = renderOperationHelp(extended, extra[0]!, opts);
    const field = (name: string, indent: string): string =>
      `${indent}&lt;${name}&gt;<span class="value">string</span>&lt;/${name}&gt;`;
    assert.ok(struct.includes(`&lt;GetClassInfoResult&gt;\n${field('id', '        ')}\n${field('title', '        ')}\n`));
    assert.ok(struct.includes(`&lt;ClassInfo xmlns=&quot;http://tempuri.org/&quot;&gt;\n${field('id', '  ')}\n`));
    assert.ok(struct.includes('<form method="post" action="/PushNotificationMobile.asmx/GetClassInfo" target="_blank">'));

    const listPage = renderOperationHelp(extended, extra[1]!, opts);
    assert.ok(listPage.includes('&lt;flag&gt;<span class="value">char</span>&lt;/flag&gt;'));
    assert.ok(listPage.includes('GET /PushNotificationMobile.asmx/ListClasses?flag=<span class="value">string</span> HTTP/1.1'));
    assert.ok(listPage.includes('&lt;ArrayOfClassInfo xmlns=&quot;http://tempuri.org/&quot;&gt;\n  &lt;ClassInfo&gt;\n'));
    assert.equal(count(listPage, '&lt;ClassInfo&gt;'), 8, 'two items in each of four answers');

    const ping = renderOperationHelp(extended, extra[3]!, opts);
    assert.ok(ping.includes('&lt;Ping xmlns=&quot;http://tempuri.org/&quot; /&gt;'));
    assert.ok(ping.includes('<pre>GET /PushNotificationMobile.asmx/Ping HTTP/1.1\nHost: localhost</pre>'));
  });
});
