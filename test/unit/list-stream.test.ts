/**
 * Long lists as pages, without a database: the operation's settling of pages and the writer's
 * streamed bodies (the same bytes as a list written whole). Their sending by writeReply is in
 * streamed-reply.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HTTP_GET } from '../../src/bindings/http-get.js';
import { SOAP11, SOAP12 } from '../../src/bindings/soap.js';
import { isListPages, settleList } from '../../src/contract/list-pages.js';
import type { ListPages, StructValue } from '../../src/contract/types.js';
import { isStreamed } from '../../src/reply/reply.js';
import type { Body, StreamedBody } from '../../src/reply/reply.js';
import { createResultWriter } from '../../src/xml/result-writer.js';

type Item = StructValue | null;
const NS = 'http://tempuri.org/';
const item = { name: 'StudentInfo', fields: ['id_student', 'fullName', 'id_device', 'ShowActive'] } as const;
const writer = createResultWriter('GetStudentSchool', { kind: 'list', item }, NS);

const students = (n: number): StructValue[] =>
  Array.from({ length: n }, (_, i) => ({
    id_student: String(i),
    fullName: i % 7 === 0 ? `O'Brien & <Sons> ${i}` : i % 5 === 0 ? `Zoë 😀 ${i}` : i % 11 === 0 ? '' : `Student ${i}`,
    id_device: i % 13 === 0 ? null : `dev-${i}`,
    ShowActive: '1',
  }));

/** Pages over a list, recording whether the source was released. */
function pagesOf(
  list: readonly Item[],
  size: number,
  fail?: Error,
): { pages: ListPages; released: () => boolean; reads: () => number } {
  let released = false;
  let reads = 0;
  async function* generate(): AsyncGenerator<readonly Item[]> {
    try {
      for (let i = 0; i < list.length; i += size) {
        reads++;
        if (fail !== undefined && i > 0) throw fail;
        yield list.slice(i, i + size);
      }
    } finally {
      released = true;
    }
  }
  const source = generate();
  return { pages: { [Symbol.asyncIterator]: () => source }, released: () => released, reads: () => reads };
}

async function bytesOf(body: Body | null): Promise<Buffer> {
  if (body === null) return Buffer.alloc(0);
  if (typeof body === 'string') return Buffer.from(body, 'utf8');
  if (!isStreamed(body)) return Buffer.concat(body);
  const out: Buffer[] = [];
  try {
    for (let pieces = await body.next(); pieces !== null; pieces = await body.next()) out.push(...pieces);
  } finally {
    await body.close();
  }
  return Buffer.concat(out);
}

describe('settleList', () => {
  it('answers a list that ends within its first page whole, and an empty one as []', async () => {
    const one = pagesOf(students(3), 5);
    const settled = await settleList(one.pages);
    assert.ok(!isListPages(settled));
    assert.deepEqual(settled, students(3));
    assert.ok(one.released());
    assert.deepEqual(await settleList(pagesOf([], 5).pages), []);
  });

  it('keeps a longer list as pages, replayed from the start', async () => {
    const many = pagesOf(students(12), 5);
    const settled = await settleList(many.pages);
    assert.ok(isListPages(settled));
    assert.equal(many.reads(), 2, 'two pages read to decide');
    const seen: Item[] = [];
    for await (const page of settled) seen.push(...page);
    assert.deepEqual(seen, students(12));
    assert.ok(many.released());
  });

  it('releases the source when the pages are given up before being read', async () => {
    const many = pagesOf(students(12), 5);
    const settled = await settleList(many.pages);
    assert.ok(isListPages(settled) && !many.released());
    await settled[Symbol.asyncIterator]().return?.();
    assert.ok(many.released());
  });

  it('rejects when one of the first two pages fails, so the failure is still a fault', async () => {
    const failing = pagesOf(students(12), 5, new Error('disk on fire'));
    await assert.rejects(settleList(failing.pages), /disk on fire/);
    assert.ok(failing.released());
  });
});

describe('streamed list bodies', () => {
  for (const n of [1, 5, 6, 999, 5000]) {
    it(`write ${n} students in pages with the bytes of the list written whole (SOAP 1.1, 1.2, HTTP)`, async () => {
      const list = students(n);
      for (const size of [1, 5, 1000]) {
        for (const version of [SOAP11, SOAP12]) {
          const whole = await bytesOf(version.write(writer, list).body);
          const streamed = version.write(writer, pagesOf(list, size).pages).body;
          assert.ok(isStreamed(streamed));
          assert.ok((await bytesOf(streamed)).equals(whole), `${version.name}, pages of ${size}`);
        }
        const whole = await bytesOf(HTTP_GET.write(writer, list).body);
        assert.ok(
          (await bytesOf(HTTP_GET.write(writer, pagesOf(list, size).pages).body)).equals(whole),
          `HTTP, pages of ${size}`,
        );
      }
    });
  }

  it('write a list found empty as the empty list, and null items as xsi:nil', async () => {
    const emptyPages = (): ListPages => ({
      async *[Symbol.asyncIterator]() {
        yield [];
      },
    });
    assert.ok(
      (await bytesOf(SOAP11.write(writer, emptyPages()).body)).equals(await bytesOf(SOAP11.write(writer, []).body)),
    );
    assert.ok(
      (await bytesOf(HTTP_GET.write(writer, emptyPages()).body)).equals(await bytesOf(HTTP_GET.write(writer, []).body)),
    );
    const withNull: Item[] = [students(1)[0]!, null, {}];
    assert.ok(
      (await bytesOf(SOAP11.write(writer, pagesOf(withNull, 1).pages).body)).equals(
        await bytesOf(SOAP11.write(writer, withNull).body),
      ),
    );
    assert.ok(
      (await bytesOf(HTTP_GET.write(writer, pagesOf(withNull, 2).pages).body)).equals(
        await bytesOf(HTTP_GET.write(writer, withNull).body),
      ),
    );
  });

  it('release their pages on close, read or not', async () => {
    const unread = pagesOf(students(20), 5);
    // Started, as settleList leaves it: a generator not started has nothing to release.
    const source = unread.pages[Symbol.asyncIterator]();
    await source.next();
    const body = SOAP11.write(writer, { [Symbol.asyncIterator]: () => source }).body as StreamedBody;
    await body.close();
    assert.ok(unread.released());
    const halfRead = pagesOf(students(20), 5);
    const half = HTTP_GET.write(writer, halfRead.pages).body as StreamedBody;
    await half.next();
    await half.close();
    assert.ok(halfRead.released());
    assert.equal(halfRead.reads(), 1);
  });
});
