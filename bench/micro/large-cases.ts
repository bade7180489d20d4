/**
 * Micro-benchmark cases of large answers, from memory: the writer held whole (string, then
 * Buffer), the writer streaming pages, and the 64 KiB-buffer prototype (writer-prototype.ts).
 */
import { isStreamed } from '../../src/reply/reply.js';
import type { ResultWriter } from '../../src/xml/result-writer.js';
import { NS } from '../scenarios/asmx-xml.js';
import { makeStudents } from '../scenarios/datasets.js';
import { record } from './fixtures.js';
import type { Row } from './fixtures.js';
import type { MicroCase } from './measure.js';
import { writeListChunks } from './writer-prototype.js';

const FIELDS = ['id_student', 'fullName', 'id_device', 'ShowActive'];

export function largeCases(schoolWriter: ResultWriter): MicroCase[] {
  const current = (list: readonly Row[]): Buffer => {
    const body = schoolWriter.soapBody(list);
    if (isStreamed(body)) throw new Error('a list held whole is never streamed');
    return typeof body === 'string' ? Buffer.from(body, 'utf8') : Buffer.concat(body);
  };
  const chunked = (list: readonly Row[]): Buffer[] =>
    writeListChunks('GetStudentSchool', NS, 'StudentInfo', FIELDS, list);
  // Built on first use, so the other cases do not run with 100,000 records on the heap.
  const lists = new Map<number, Row[]>();
  const large = (n: number): Row[] => {
    let list = lists.get(n);
    if (list === undefined) {
      list = makeStudents(`m${n}`, 'x', n, 0).map(record);
      lists.set(n, list);
      if (!current(list).equals(Buffer.concat(chunked(list))))
        throw new Error('the writer prototype differs from the writer');
    }
    return list;
  };
  // A list streamed in pages of 1,000, as a long GetStudentSchool answer is: every piece made, none kept.
  const streamed = async (list: readonly Row[]): Promise<number> => {
    async function* pages(): AsyncGenerator<readonly Row[]> {
      for (let i = 0; i < list.length; i += 1000) yield list.slice(i, i + 1000);
    }
    const body = schoolWriter.soapBody(pages());
    if (!isStreamed(body)) throw new Error('pages are streamed');
    let bytes = 0;
    for (let pieces = await body.next(); pieces !== null; pieces = await body.next())
      for (const p of pieces) bytes += p.length;
    await body.close();
    return bytes;
  };
  return [
    { group: 'large', name: 'writer soapBody + Buffer.from (10,000 students)', fn: () => current(large(10_000)) },
    { group: 'large', name: 'prototype: 64 KiB buffers (10,000 students)', fn: () => chunked(large(10_000)) },
    {
      group: 'large',
      name: 'streamed soapBody, pages of 1,000 (10,000 students)',
      fn: () => streamed(large(10_000)),
      async: true,
    },
    { group: 'large', name: 'writer soapBody + Buffer.from (100,000 students)', fn: () => current(large(100_000)) },
    {
      group: 'large',
      name: 'streamed soapBody, pages of 1,000 (100,000 students)',
      fn: () => streamed(large(100_000)),
      async: true,
    },
    { group: 'large', name: 'prototype: 64 KiB buffers (100,000 students)', fn: () => chunked(large(100_000)) },
  ];
}
