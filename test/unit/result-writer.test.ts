import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { StructValue } from '../../src/contract/types.js';
import { isStreamed } from '../../src/reply/reply.js';
import type { Body } from '../../src/reply/reply.js';
import { createResultWriter } from '../../src/xml/result-writer.js';
import { readTree } from '../../src/xml/xml-tree.js';

/** XmlSerializer shapes no store can produce (null lists and items), and large answers in pieces. */
const NS = 'http://tempuri.org/';
const item = { name: 'StudentInfo', fields: ['id_student', 'fullName'] } as const;
const writer = createResultWriter('GetStudentSchool', { kind: 'list', item }, NS);
const text = (b: Body | null): string => {
  if (b === null) return '';
  if (typeof b === 'string') return b;
  if (isStreamed(b)) throw new Error('a list held whole is never streamed');
  return Buffer.concat(b).toString('utf8');
};

describe('result writer', () => {
  it('a null list leaves the result out in SOAP and is xsi:nil at an HTTP root', () => {
    assert.equal(text(writer.soapBody(null)), `<GetStudentSchoolResponse xmlns="${NS}" />`);
    assert.equal(
      text(writer.httpDocument(null)),
      `<ArrayOfStudentInfo xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:nil="true" xmlns="${NS}" />`,
    );
  });

  it('a null item is xsi:nil, an item with no fields self-closes', () => {
    const list = [{ id_student: '20', fullName: 'Before Null' }, null, {}];
    assert.equal(
      text(writer.soapBody(list)),
      `<GetStudentSchoolResponse xmlns="${NS}"><GetStudentSchoolResult><StudentInfo><id_student>20</id_student><fullName>Before Null</fullName></StudentInfo><StudentInfo xsi:nil="true" /><StudentInfo /></GetStudentSchoolResult></GetStudentSchoolResponse>`,
    );
    assert.match(
      text(writer.httpDocument(list)),
      /\n {2}<StudentInfo xsi:nil="true" \/>\n {2}<StudentInfo \/>\n<\/ArrayOfStudentInfo>$/,
    );
  });

  it('writes a large list in pieces with the same bytes as one string would', () => {
    const big: StructValue[] = Array.from({ length: 5000 }, (_, i) => ({
      id_student: String(i),
      fullName: `Zoë <${i}> & 😀`,
    }));
    const small = big.slice(0, 10);
    const soap = writer.soapBody(big);
    assert.ok(Array.isArray(soap), 'large lists are chunked');
    const whole = text(soap);
    assert.ok(whole.startsWith(text(writer.soapBody(small)).slice(0, 200)));
    assert.equal(readTree(whole).children[0]!.children.length, 5000);
    const http = text(writer.httpDocument(big));
    assert.equal(readTree(http).children.length, 5000);
    assert.ok(http.includes('<fullName>Zoë &lt;4999&gt; &amp; 😀</fullName>'));
  });
});
