/**
 * The table of simple types (src/contract/scalars.ts) against what .NET Framework's XmlConvert and
 * Convert.ChangeType write and read, and the result writer taking every entry from it.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SCALARS, scalarOf, ScalarFormatError } from '../../src/contract/scalars.js';
import type { ScalarName, ScalarValue } from '../../src/contract/scalars.js';
import { createResultWriter } from '../../src/xml/result-writer.js';

const names = Object.keys(SCALARS) as ScalarName[];

/** The reason .NET gives, or a failure naming what was read instead. */
function reasonOf(read: () => unknown): string {
  try {
    return `read ${String(read())}`;
  } catch (err) {
    assert.ok(err instanceof ScalarFormatError, String(err));
    return err.reason;
  }
}

describe('the table of simple types', () => {
  it('names each type once: root element, sample and XSD local name agree', () => {
    for (const name of names) {
      const s = scalarOf(name);
      assert.equal(s.element, name);
      assert.equal(s.sample, name);
      assert.equal(s.xsd.slice(s.xsd.indexOf(':') + 1), name);
      assert.equal(s.valueType, name !== 'string', `${name}: only string is a reference type`);
    }
  });

  it('double: .NET Framework "R" (15 digits when they read back, else 17), INF, NaN, -0', () => {
    const cases: Array<[number, string]> = [
      [0.1, '0.1'],
      [-1.5, '-1.5'],
      [0.1 + 0.2, '0.30000000000000004'],
      [Math.PI, '3.1415926535897931'],
      [1 / 3, '0.33333333333333331'],
      [1e14, '100000000000000'],
      [1e15, '1E+15'],
      [123456789012345680000, '1.2345678901234568E+20'],
      [0.0001, '0.0001'],
      [0.00001, '1E-05'],
      [Number.MAX_VALUE, '1.7976931348623157E+308'],
      [5e-324, '4.94065645841247E-324'],
      [Infinity, 'INF'],
      [-Infinity, '-INF'],
      [NaN, 'NaN'],
      [-0, '-0'],
      [0, '0'],
    ];
    for (const [value, text] of cases) {
      assert.equal(SCALARS.double.toXml(value), text, String(value));
      assert.ok(Object.is(SCALARS.double.fromXml(text), value), text);
    }
    assert.equal(SCALARS.double.fromForm(' 1,000.5 '), 1000.5);
    assert.equal(
      reasonOf(() => SCALARS.double.fromForm('INF')),
      'Input string was not in a correct format.',
    );
    assert.equal(
      reasonOf(() => SCALARS.double.fromXml('1e999')),
      'Value was either too large or too small for a Double.',
    );
  });

  it('dateTime: a UTC instant as XmlSerializer writes a UTC DateTime, the fraction trimmed', () => {
    const at = (ms: number): Date => new Date(Date.UTC(2024, 4, 1, 10, 20, 30, ms));
    assert.equal(SCALARS.dateTime.toXml(at(0)), '2024-05-01T10:20:30Z');
    assert.equal(SCALARS.dateTime.toXml(at(120)), '2024-05-01T10:20:30.12Z');
    assert.equal(SCALARS.dateTime.toXml(SCALARS.dateTime.soapMissing), '0001-01-01T00:00:00Z');
    assert.deepEqual(SCALARS.dateTime.fromXml('2024-05-01T13:20:30.12+03:00'), at(120));
    assert.deepEqual(SCALARS.dateTime.fromXml(' 2024-05-01 '), new Date(Date.UTC(2024, 4, 1)));
    assert.equal(
      reasonOf(() => SCALARS.dateTime.fromXml('2024-02-30')),
      "The string '2024-02-30' is not a valid AllXsd value.",
    );
    assert.deepEqual(SCALARS.dateTime.fromForm('2024-05-01 10:20:30Z'), at(0));
    assert.equal(
      reasonOf(() => SCALARS.dateTime.fromForm('May 1')),
      'String was not recognized as a valid DateTime.',
    );
    assert.throws(() => SCALARS.dateTime.toXml(new Date(Number.NaN)), /between the years 1 and 9999/);
  });

  it('int and long: invariant digits, white space and one sign read, .NET range errors', () => {
    assert.equal(SCALARS.int.toXml(-2147483648), '-2147483648');
    assert.equal(SCALARS.int.fromXml(' +42\n'), 42);
    assert.equal(SCALARS.int.fromForm('\t-7 '), -7);
    assert.ok(Object.is(SCALARS.int.fromXml('-0'), 0));
    assert.equal(
      reasonOf(() => SCALARS.int.fromXml('4.0')),
      'Input string was not in a correct format.',
    );
    assert.equal(
      reasonOf(() => SCALARS.int.fromForm('')),
      'Input string was not in a correct format.',
    );
    assert.equal(
      reasonOf(() => SCALARS.int.fromForm('2147483648')),
      'Value was either too large or too small for an Int32.',
    );
    assert.throws(() => SCALARS.int.toXml(1.5), /must be an integer/);
    assert.throws(() => SCALARS.int.toXml(2 ** 31), /does not fit in a System.Int32/);
    assert.equal(SCALARS.long.toXml(9223372036854775807n), '9223372036854775807');
    assert.equal(SCALARS.long.fromXml('-9223372036854775808'), -9223372036854775808n);
    assert.equal(
      reasonOf(() => SCALARS.long.fromXml('9223372036854775808')),
      'Value was either too large or too small for an Int64.',
    );
  });

  it('boolean: XmlConvert reads true, false, 1, 0; Boolean.Parse reads True and False in any case', () => {
    assert.equal(SCALARS.boolean.toXml(true), 'true');
    assert.equal(SCALARS.boolean.toXml(false), 'false');
    assert.equal(SCALARS.boolean.fromXml(' 1 '), true);
    assert.equal(SCALARS.boolean.fromXml('false'), false);
    assert.equal(
      reasonOf(() => SCALARS.boolean.fromXml('True')),
      "The string 'True' is not a valid Boolean value.",
    );
    assert.equal(SCALARS.boolean.fromForm(' TRUE '), true);
    assert.equal(
      reasonOf(() => SCALARS.boolean.fromForm('0')),
      'String was not recognized as a valid Boolean.',
    );
  });

  it('decimal: held as its invariant text, its scale kept', () => {
    assert.equal(SCALARS.decimal.toXml('-12.50'), '-12.50');
    assert.throws(() => SCALARS.decimal.toXml('1e3'), /invariant text/);
    assert.equal(SCALARS.decimal.fromXml(' +001.50 '), '1.50');
    assert.equal(SCALARS.decimal.fromXml('.5'), '0.5');
    assert.equal(SCALARS.decimal.fromXml('-0'), '0');
    assert.equal(
      reasonOf(() => SCALARS.decimal.fromXml('1,000')),
      'Input string was not in a correct format.',
    );
    assert.equal(SCALARS.decimal.fromForm('1,000.5-'), '-1000.5');
    assert.equal(
      reasonOf(() => SCALARS.decimal.fromForm('1'.repeat(30))),
      'Value was either too large or too small for a Decimal.',
    );
  });

  it('char: its UTF-16 code in XML (a lone non-digit taken literally, decision 8), one character in a form', () => {
    assert.equal(SCALARS.char.toXml(49), '49');
    assert.equal(SCALARS.char.fromXml(' 49 '), 49);
    assert.equal(SCALARS.char.fromXml('Y'), 89);
    assert.equal(
      reasonOf(() => SCALARS.char.fromXml('65536')),
      'Value was either too large or too small for a UInt16.',
    );
    assert.equal(
      reasonOf(() => SCALARS.char.fromXml('')),
      'Input string was not in a correct format.',
    );
    assert.equal(SCALARS.char.fromForm('1'), 49);
    assert.equal(
      reasonOf(() => SCALARS.char.fromForm('12')),
      'String must be exactly one character long.',
    );
  });

  it('string: as is, null only for a string', () => {
    assert.equal(SCALARS.string.fromXml(' a '), ' a ');
    assert.equal(SCALARS.string.soapMissing, null);
  });
});

describe('the result writer takes every simple type from the table', () => {
  const samples: Readonly<Record<ScalarName, ScalarValue>> = {
    string: 'a<b',
    char: 49,
    int: -3,
    long: 9007199254740993n,
    boolean: true,
    decimal: '2.50',
    double: 0.5,
    dateTime: new Date(Date.UTC(2024, 0, 2, 3, 4, 5)),
  };
  for (const name of names) {
    it(`${name}: the XmlConvert text under OpResult in SOAP, under <${name}> in GET/POST, read back the same`, () => {
      const writer = createResultWriter('Op', { kind: name }, 'http://tempuri.org/');
      const scalar = scalarOf(name);
      const value = samples[name];
      const text = scalar.toXml(value).replace(/</g, '&lt;');
      assert.equal(
        writer.soapBody(value),
        `<OpResponse xmlns="http://tempuri.org/"><OpResult>${text}</OpResult></OpResponse>`,
      );
      assert.equal(writer.httpDocument(value), `<${name} xmlns="http://tempuri.org/">${text}</${name}>`);
      assert.deepEqual(scalar.fromXml(scalar.toXml(value)), value);
    });
  }
});
