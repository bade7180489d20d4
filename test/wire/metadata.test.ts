/**
 * WSDL and disco against the documents the reference ASMX served (test/fixtures/wsdl, copied from
 * the captures). A WSDL is compared on the operations its capture has: the service file rendered
 * with those operations alone must equal the capture, so an operation added to a service file
 * since passes (it has no capture to match), while a captured one that changed, moved or went
 * missing fails. The only difference allowed is the root's namespace-declaration order: the
 * fixtures have Mono's hash order, we write .NET's classic order (decision 5).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { SaxesParser } from 'saxes';
import { defineOperation } from '../../src/contract/define.js';
import type { ServiceSpec } from '../../src/contract/types.js';
import { renderDisco } from '../../src/metadata/disco.js';
import { soapAction } from '../../src/metadata/names.js';
import { renderWsdl } from '../../src/metadata/wsdl.js';
import { services } from '../../src/operations/index.js';
import { repoRoot } from '../helpers/test-server.js';

const TEMPURI = 'http://tempuri.org/';
/** The address the captures were taken at; rendering with it leaves nothing to normalise there. */
const captureAddress = (service: string): string => `http://127.0.0.1:8081/${service}.asmx`;
const fixture = (file: string): string => readFileSync(join(repoRoot, 'test', 'fixtures', 'wsdl', file), 'utf8');

/** Decision 5: .NET's classic order (`xmlns:s1` only when a char is used). */
const DOTNET_ROOT_ORDER = [
  'xmlns:soap',
  'xmlns:tm',
  'xmlns:soapenc',
  'xmlns:mime',
  'xmlns:tns',
  'xmlns:s1',
  'xmlns:s',
  'xmlns:soap12',
  'xmlns:http',
  'targetNamespace',
  'xmlns:wsdl',
] as const;

/**
 * Rewrites the root start tag (line 2) with its attributes in `order`, values untouched, and
 * leaves every other byte alone. Throws unless the tag parses completely and its attributes are
 * exactly a subset of `order` without repeats, so a changed or extra declaration cannot slip through.
 */
function reorderRootAttributes(xml: string, order: readonly string[]): string {
  const lines = xml.split('\n');
  const root = lines[1] ?? '';
  const match = /^<wsdl:definitions((?: [A-Za-z][\w:]*="[^"]*")+)>$/.exec(root);
  assert.ok(match, `root start tag not recognised: ${root}`);
  const attrs = new Map<string, string>();
  for (const [, name = '', value = ''] of (match[1] ?? '').matchAll(/ ([\w:]+)="([^"]*)"/g)) {
    assert.ok(!attrs.has(name), `attribute ${name} repeated`);
    attrs.set(name, value);
  }
  for (const name of attrs.keys()) assert.ok(order.includes(name), `unexpected root attribute ${name}`);
  const reordered = order.filter((n) => attrs.has(n)).map((n) => ` ${n}="${attrs.get(n) ?? ''}"`);
  lines[1] = `<wsdl:definitions${reordered.join('')}>`;
  return lines.join('\n');
}

/** The operations a captured WSDL describes: its SOAP port type's, in order. */
function capturedOperations(wsdl: string): string[] {
  const start = wsdl.indexOf('<wsdl:portType name=');
  const portType = wsdl.slice(start, wsdl.indexOf('</wsdl:portType>', start));
  return [...portType.matchAll(/<wsdl:operation name="([^"]+)">/g)].map((m) => m[1]!);
}

/**
 * The WSDL of `service` restricted to the operations of its capture (in the service's own order),
 * and the capture, root order normalised: equal unless a captured operation changed or is gone.
 */
function capturedPart<C>(service: ServiceSpec<C>, capture: string): { actual: string; expected: string } {
  const captured = new Set(capturedOperations(capture));
  const known = { name: service.name, operations: service.operations.filter((op) => captured.has(op.name)) };
  return {
    actual: renderWsdl(known, TEMPURI, captureAddress(service.name)),
    expected: reorderRootAttributes(capture, DOTNET_ROOT_ORDER),
  };
}

function assertWellFormed(xml: string): void {
  // xmlns mode also fails on undeclared prefixes; saxes throws on the first error.
  assert.doesNotThrow(() => new SaxesParser({ xmlns: true }).write(xml).close());
}

describe('WSDL', () => {
  for (const service of services) {
    it(`${service.name}: its captured operations equal the captured WSDL apart from the root namespace order`, () => {
      const { actual, expected } = capturedPart(service, fixture(`${service.name}.wsdl`));
      assert.equal(actual, expected);
    });

    it(`${service.name}: is well-formed XML with namespaces`, () => {
      assertWellFormed(renderWsdl(service, TEMPURI, captureAddress(service.name)));
    });
  }

  it('declares xmlns:s1 only for a service with a char parameter', () => {
    for (const service of services) {
      const usesChar = service.operations.some((op) => op.params.some((p) => p.type === 'char'));
      const wsdl = renderWsdl(service, TEMPURI, captureAddress(service.name));
      assert.equal(wsdl.includes('xmlns:s1='), usesChar, service.name);
      assert.equal(wsdl.includes('<s:import namespace="http://microsoft.com/wsdl/types/" />'), usesChar);
    }
  });

  it('lets an operation added to a captured service file through, and still fails on a changed captured one', () => {
    const notes = services.find((s) => s.name === 'NotificationNotes')!;
    const capture = fixture('NotificationNotes.wsdl');
    assert.deepEqual(
      capturedOperations(capture),
      notes.operations.map((op) => op.name),
    );
    const added = defineOperation({
      service: notes.name,
      name: 'GetStudentCount',
      doc: 'The number of students of a school.',
      params: [{ name: 'school_base_url', type: 'string', doc: 'the school' }],
      result: { kind: 'int' },
      run: async () => 0,
    });
    for (const operations of [
      [...notes.operations, added],
      [added, ...notes.operations],
    ]) {
      const grown = { name: notes.name, operations };
      const { actual, expected } = capturedPart(grown, capture);
      assert.equal(actual, expected, 'an added operation passes');
      const whole = renderWsdl(grown, TEMPURI, captureAddress(notes.name));
      assert.notEqual(whole, expected, 'the WSDL served does have it');
      assert.ok(whole.includes('<s:element minOccurs="1" maxOccurs="1" name="GetStudentCountResult" type="s:int" />'));
    }
    const changes: Array<[string, ServiceSpec['operations']]> = [
      [
        'a parameter type',
        notes.operations.map((op) => ({ ...op, params: op.params.map((p) => ({ ...p, type: 'int' as const })) })),
      ],
      ['a result type', notes.operations.map((op) => ({ ...op, result: { kind: 'string' as const } }))],
      [
        'a name',
        notes.operations.map((op) => ({ ...op, params: op.params.map((p) => ({ ...p, name: `${p.name}_` })) })),
      ],
      ['an operation gone', []],
    ];
    for (const [what, operations] of changes) {
      const { actual, expected } = capturedPart({ name: notes.name, operations: [...operations, added] }, capture);
      assert.notEqual(actual, expected, `${what} changed in a captured operation fails`);
    }
  });

  it('the root order normaliser changes the order only', () => {
    const original = fixture('NotificationNotes.wsdl');
    const reordered = reorderRootAttributes(original, DOTNET_ROOT_ORDER);
    assert.notEqual(reordered, original, 'Mono order differs from .NET order');
    assert.equal(reordered.length, original.length);
    assert.deepEqual([...reordered].sort(), [...original].sort());
    assert.equal(reordered.split('\n').slice(2).join('\n'), original.split('\n').slice(2).join('\n'));
  });

  it('the comparison notices a changed root value, an extra declaration or a changed body', () => {
    const service = services.find((s) => s.name === 'PushNotificationMobile')!;
    const rendered = renderWsdl(service, TEMPURI, captureAddress(service.name));
    const original = fixture('PushNotificationMobile.wsdl');
    const changedValue = original.replace('xmlns:mime="http://schemas.xmlsoap.org/wsdl/mime/"', 'xmlns:mime="x"');
    assert.notEqual(reorderRootAttributes(changedValue, DOTNET_ROOT_ORDER), rendered);
    const extra = original.replace(' targetNamespace=', ' xmlns:extra="x" targetNamespace=');
    assert.throws(() => reorderRootAttributes(extra, DOTNET_ROOT_ORDER), /unexpected root attribute/);
    const changedBody = original.replace(
      'minOccurs="0" maxOccurs="1" name="id"',
      'maxOccurs="1" minOccurs="0" name="id"',
    );
    assert.notEqual(changedBody, original);
    assert.notEqual(reorderRootAttributes(changedBody, DOTNET_ROOT_ORDER), rendered);
  });

  it('layout: declaration, LF, two-space indentation, no trailing newline', () => {
    const wsdl = renderWsdl(services[0]!, TEMPURI, captureAddress(services[0]!.name));
    assert.ok(wsdl.startsWith('<?xml version="1.0" encoding="utf-8"?>\n<wsdl:definitions '));
    assert.ok(wsdl.endsWith('\n</wsdl:definitions>'));
    assert.ok(!wsdl.includes('\r') && !wsdl.includes('\t'));
  });

  it('writes the given address into the four ports, escaped', () => {
    const service = services.find((s) => s.name === 'NotificationNotes')!;
    const atCapture = renderWsdl(service, TEMPURI, captureAddress(service.name));
    const address = 'https://school.example:8443/School/NotificationNotes.asmx';
    const wsdl = renderWsdl(service, TEMPURI, address);
    assert.equal(wsdl, atCapture.replaceAll(captureAddress(service.name), address));
    assert.equal(wsdl.split(`location="${address}"`).length - 1, 4);
    const odd = renderWsdl(service, TEMPURI, 'http://h/a.asmx?x="1"&y=<2>');
    assert.equal(odd.split('location="http://h/a.asmx?x=&quot;1&quot;&amp;y=&lt;2&gt;"').length - 1, 4);
    assertWellFormed(odd);
  });
});

describe('SOAP actions and a custom namespace', () => {
  it('follows SoapReflector: a / is added unless the namespace ends with one', () => {
    assert.equal(soapAction('http://tempuri.org/', 'GetTokenDevice'), 'http://tempuri.org/GetTokenDevice');
    assert.equal(soapAction('urn:school', 'GetTokenDevice'), 'urn:school/GetTokenDevice');
    assert.equal(soapAction('http://example.org/school', 'A'), 'http://example.org/school/A');
  });

  for (const namespace of ['http://example.org/school', 'http://example.org/school/', 'urn:a&b']) {
    it(`replaces every tempuri use with ${namespace}`, () => {
      for (const service of services) {
        const wsdl = renderWsdl(service, namespace, captureAddress(service.name));
        assertWellFormed(wsdl);
        assert.ok(!wsdl.includes(TEMPURI), service.name);
        const ns = namespace.replaceAll('&', '&amp;');
        assert.ok(wsdl.includes(` xmlns:tns="${ns}" `));
        assert.ok(wsdl.includes(` targetNamespace="${ns}" xmlns:wsdl=`));
        assert.ok(wsdl.includes(`<s:schema elementFormDefault="qualified" targetNamespace="${ns}">`));
        const actions = [...wsdl.matchAll(/soapAction="([^"]*)"/g)].map((m) => m[1]);
        const expected = service.operations.map((op) => soapAction(namespace, op.name).replaceAll('&', '&amp;'));
        assert.deepEqual(actions, [...expected, ...expected], 'SOAP 1.1 then SOAP 1.2 binding');
        const disco = renderDisco(service, namespace, captureAddress(service.name));
        assertWellFormed(disco);
        assert.ok(disco.includes(`xmlns:q1="${ns}"`) && disco.includes(`xmlns:q2="${ns}"`));
      }
    });
  }
});

describe('disco', () => {
  for (const service of services) {
    it(`${service.name}: equals the captured disco document`, () => {
      const disco = renderDisco(service, TEMPURI, captureAddress(service.name));
      assert.equal(disco, fixture(`${service.name}.disco`));
      assertWellFormed(disco);
    });
  }

  it('takes the address as given', () => {
    const service = services[0]!;
    const address = `https://school.example/${service.name}.asmx`;
    const atCapture = renderDisco(service, TEMPURI, captureAddress(service.name));
    assert.equal(renderDisco(service, TEMPURI, address), atCapture.replaceAll(captureAddress(service.name), address));
  });
});
