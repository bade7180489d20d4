/**
 * The answer cache (bindings/answer-cache.ts): a GetStudentSchool answer is kept while the data
 * is unchanged and never served once it changed, whoever changed it (another process's import,
 * this process's own write), on SQLite and PostgreSQL; SIS_ANSWER_CACHE_BYTES bounds the cache.
 * PostgreSQL's data version: answer-cache-data-version.test.ts. Several processes on one
 * PostgreSQL: answer-cache-instances.test.ts.
 */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { AnswerCache } from '../../src/bindings/answer-cache.js';
import { GetStudentSchool } from '../../src/operations/get-student-school.js';
import { GetTokenDevice } from '../../src/operations/get-token-device.js';
import type { Operation } from '../../src/operations/index.js';
import type { Reply } from '../../src/reply/reply.js';
import { openStore } from '../../src/store/open/open-store.js';
import { ARGS, counter, dataset, names, student } from '../helpers/answer-cache-lists.js';
import { bindingClients } from '../helpers/binding-clients.js';
import { cleanupTargets, storeTargets } from '../helpers/store-targets.js';
import { startTestServer } from '../helpers/test-server.js';

after(() => cleanupTargets());

for (const target of storeTargets) {
  describe(`answer cache on ${target.name}`, { skip: target.skip ?? false }, () => {
    for (const binding of bindingClients) {
      test(`${binding.name}: a repeated list is answered from the cache, byte for byte, until the data changes`, async () => {
        const db = await target.fresh();
        const server = await startTestServer({ env: { SIS_DATABASE_URL: db.url }, dataset: dataset(3) });
        try {
          const first = await binding.call(server.url, GetStudentSchool as Operation, ARGS);
          const again = await binding.call(server.url, GetStudentSchool as Operation, ARGS);
          assert.ok(again.res.body.equals(first.res.body), 'same bytes');
          assert.equal(await counter(server, 'sis_answer_cache_hits_total'), 1);
          assert.equal(await counter(server, 'sis_answer_cache_misses_total'), 1);

          // Another process (here: another store on the same database) imports a fourth student: seen at once.
          const other = await openStore(db.url);
          await other.importDataset({ students: [student(4)] });
          await other.close();
          assert.deepEqual(await names(server, binding), ['Student 1', 'Student 2', 'Student 3', 'Student 4']);

          // This process's own write (SQLite: the same connection, whose commits data_version does not count).
          await server.app.store.importDataset({ students: [{ ...student(2), fullName: 'Renamed' }] });
          assert.deepEqual(await names(server, binding), ['Student 1', 'Renamed', 'Student 3', 'Student 4']);
          assert.equal(
            await counter(server, 'sis_answer_cache_hits_total'),
            1,
            'no answer served from before a change',
          );

          // Operations not marked cacheable never touch it.
          await binding.call(server.url, GetTokenDevice as Operation, { id: 'dev-1' });
          await binding.call(server.url, GetTokenDevice as Operation, { id: 'dev-1' });
          assert.equal(await counter(server, 'sis_answer_cache_misses_total'), 3);
        } finally {
          await server.close();
        }
      });
    }
  });
}

describe('answer cache settings', () => {
  test('SIS_ANSWER_CACHE_BYTES=0 keeps nothing (and /metrics has no cache counters)', async () => {
    const server = await startTestServer({ dataset: dataset(3), env: { SIS_ANSWER_CACHE_BYTES: '0' } });
    try {
      const [binding] = bindingClients;
      await names(server, binding!);
      await names(server, binding!);
      assert.equal(await counter(server, 'sis_answer_cache_hits_total'), 0);
    } finally {
      await server.close();
    }
  });
});

describe('AnswerCache bounds', () => {
  const reply = (text: string): Reply => ({ status: 200, contentType: 'text/xml', body: text, invoked: true });
  const call = (school: string) => ({
    op: GetStudentSchool as Operation,
    args: { school_base_url: school, show_active: 49 },
  });

  test('the oldest answers leave first once the bytes are over the budget; a changed version misses', () => {
    const cache = new AnswerCache(1000);
    const keys = ['a', 'b', 'c'].map((s) => cache.key('soap11', call(s))!);
    for (const k of keys) cache.set(k, 'v1', reply('x'.repeat(60))); // 120 bytes each
    assert.ok(cache.get(keys[0]!, 'v1') !== undefined);
    assert.equal(cache.get(keys[0]!, 'v2'), undefined, 'another data version');
    for (let i = 0; i < 10; i++) cache.set(cache.key('soap11', call(`more-${i}`))!, 'v1', reply('y'.repeat(60)));
    assert.ok(cache.bytes <= 1000);
    assert.equal(cache.get(keys[1]!, 'v1'), undefined, 'evicted');
  });

  test('an answer over an eighth of the budget, a streamed answer, or a long key is not kept', () => {
    const cache = new AnswerCache(1000);
    const key = cache.key('soap11', call('big'))!;
    cache.set(key, 'v1', reply('z'.repeat(100)));
    assert.equal(cache.get(key, 'v1'), undefined);
    const streamed: Reply = { ...reply(''), body: { next: async () => null, close: async () => undefined } };
    cache.set(key, 'v1', streamed);
    assert.equal(cache.bytes, 0);
    assert.equal(cache.key('soap11', call('x'.repeat(2000))), null);
    assert.notEqual(cache.key('soap11', call('a')), cache.key('soap12', call('a')), 'each binding its own bytes');
    // Form values may hold any character, NUL included: values are length-prefixed, so keys cannot collide.
    const two = (a: string, b: string) => ({
      op: {
        ...(GetStudentSchool as Operation),
        params: [
          { name: 'a', type: 'string', doc: '' },
          { name: 'b', type: 'string', doc: '' },
        ],
      } as Operation,
      args: { a, b },
    });
    for (const [sep1, sep2] of [
      ['\u00001:', '\u00001:'],
      ['\u0000=', '\u0000='],
    ]) {
      assert.notEqual(cache.key('httpget', two(`x${sep1}y`, 'z')), cache.key('httpget', two('x', `y${sep2}z`)));
    }
  });
});
