/**
 * Stale answers' own rules (bindings/stale-answers.ts), on the class: what one client's one-off
 * ids can push out (issue 40: 600 ids from one client emptied everyone's 64 KiB), and how long an
 * answer with a data version stays servable. The partition itself is test/store/database-partition.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { StaleAnswers } from '../../src/bindings/stale-answers.js';
import type { Reply } from '../../src/reply/reply.js';
import { StoreNotReadyError } from '../../src/store/open/background-store.js';

const reply = (body: string): Reply => ({ status: 200, contentType: 'text/xml; charset=utf-8', body, invoked: true });
const DOWN = new StoreNotReadyError();

describe('StaleAnswers', () => {
  test("one client's 600 one-off ids push out neither what several clients asked nor other clients' own", () => {
    const stale = new StaleAnswers({ maxAgeMs: 60_000, maxBytes: 64 * 1024 });
    const answer = reply('x'.repeat(200));
    stale.keep('school-a', answer, null, '10.0.0.1');
    stale.keep('school-a', answer, null, '10.0.0.2');
    stale.keep('token-7', answer, null, '10.0.0.3');
    for (let i = 0; i < 600; i++) stale.keep(`token-${1000 + i}`, reply('y'.repeat(200)), null, '10.0.0.66');
    assert.ok(stale.bytes <= 64 * 1024);
    assert.equal(stale.answer('school-a', DOWN, null), answer, 'asked by two clients: kept');
    assert.equal(stale.answer('token-7', DOWN, null), answer, "another client's own: kept");
    assert.ok(stale.answer('token-1599', DOWN, null) !== undefined, "the flooding client's newest: kept");
    assert.equal(stale.answer('token-1000', DOWN, null), undefined, "the flooding client's oldest: gone");
  });

  test('past the budget, answers one client asked leave before those several asked', () => {
    const stale = new StaleAnswers({ maxAgeMs: 60_000, maxBytes: 8000 });
    const answer = reply('x'.repeat(400)); // about 800 bytes each
    stale.keep('shared', answer, null, 'a');
    stale.keep('shared', answer, null, 'b');
    for (let i = 0; i < 40; i++) stale.keep(`own-${i}`, answer, null, `client-${i}`);
    assert.ok(stale.bytes <= 8000);
    assert.equal(stale.answer('shared', DOWN, null), answer);
    assert.equal(stale.answer('own-0', DOWN, null), undefined);
  });

  test('an answer made at a data version is served while that version was read within maxAgeMs, no longer', () => {
    let now = 1_000_000;
    const stale = new StaleAnswers({ maxAgeMs: 20_000, maxBytes: 64 * 1024, now: () => now });
    const answer = reply('list');
    stale.keep('school-a', answer, 'v1', 'a');
    now += 15_000;
    assert.equal(stale.answer('school-a', DOWN, { version: 'v1', at: now - 1000 }), answer, 'v1 read a second ago');
    assert.equal(stale.answer('school-a', DOWN, { version: 'v2', at: now - 1000 }), undefined, 'changed since');
    now += 10_000;
    assert.equal(
      stale.answer('school-a', DOWN, { version: 'v1', at: 1_000_000 }),
      undefined,
      'v1 last read 25 s ago: whoever may have changed the data since, it is not served',
    );
    assert.equal(stale.answer('school-a', DOWN, null), undefined, 'no version read at all');
    stale.keep('token-1', answer, null, 'a');
    now += 19_000;
    assert.equal(stale.answer('token-1', DOWN, null), answer, 'without a version: bounded by when it was made');
    now += 2000;
    assert.equal(stale.answer('token-1', DOWN, null), undefined);
  });
});
