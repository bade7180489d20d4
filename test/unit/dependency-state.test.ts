/**
 * One dependency's state as its calls tell it, and the lines it writes: one when it goes, one when
 * it is back after working for RECOVERY_SETTLE_MS, whatever flapping comes between. The flap is
 * the one CI met (a PostgreSQL stop ending its connections one by one): failed, worked, failed
 * again 7 ms later, which wrote two outages where there was one.
 */
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import { Dependency, RECOVERY_SETTLE_MS } from '../../src/observe/dependency-health.js';
import type { Problem } from '../../src/observe/dependency-health.js';

const DOWN: Problem = { what: 'unavailable', level: 'error', meanwhile: 'check it' };

/** A dependency whose lines are kept, as their messages. */
function watched(): { dependency: Dependency; lines: () => Promise<string[]> } {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  const dependency = new Dependency('database', pino({ level: 'info' }, stream));
  const lines = async (): Promise<string[]> => {
    await new Promise((resolve) => setImmediate(resolve));
    return text
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => String((JSON.parse(l) as { msg: unknown }).msg));
  };
  return { dependency, lines };
}

/** One outage, and over: its line when it went, and `back` when it came back. */
async function oneOutage(dependency: Dependency, lines: () => Promise<string[]>, back: string): Promise<void> {
  assert.deepEqual(await lines(), ['database unavailable: check it', `database ${back}`]);
  assert.equal(dependency.problem, null);
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const settled = (): Promise<void> => sleep(RECOVERY_SETTLE_MS + 200);

describe('a dependency state', () => {
  it('a failure within the settling spell is the same outage: one line when it goes, one when it is back', async () => {
    const { dependency, lines } = watched();
    dependency.failed(DOWN, new Error('terminating connection due to administrator command'), undefined, Date.now());
    assert.deepEqual(await lines(), ['database unavailable: check it']);

    await sleep(2);
    dependency.worked(undefined, Date.now());
    assert.equal(dependency.problem, DOWN, 'not back until it has worked for the spell');
    await sleep(2);
    dependency.failed(DOWN, new Error('terminating connection due to administrator command'), undefined, Date.now());
    await settled();
    assert.deepEqual(await lines(), ['database unavailable: check it'], 'no line for the flap');
    assert.equal(dependency.problem, DOWN);

    dependency.worked(undefined, Date.now());
    await settled();
    await oneOutage(dependency, lines, 'back to normal after 1 s (2 failed calls meanwhile)');
  });

  it('a call begun before it worked again, failing after, neither ends the spell nor opens an outage', async () => {
    const { dependency, lines } = watched();
    dependency.failed(DOWN, undefined, undefined, Date.now());
    const before = Date.now();
    await sleep(2);
    dependency.worked(undefined, Date.now());
    dependency.failed(DOWN, undefined, undefined, before);
    await settled();
    dependency.failed(DOWN, undefined, undefined, before);
    await oneOutage(dependency, lines, 'back to normal after 0 s (1 failed call meanwhile)');
  });

  it('a call begun before the failure, answered after, is no sign it is back', async () => {
    const { dependency, lines } = watched();
    const before = Date.now();
    await sleep(2);
    dependency.failed(DOWN, undefined, undefined, Date.now());
    dependency.worked(undefined, before);
    await settled();
    assert.deepEqual(await lines(), ['database unavailable: check it']);
    assert.equal(dependency.problem, DOWN);
  });

  it('each part must work again: one still failing holds the outage', async () => {
    const { dependency, lines } = watched();
    dependency.failed(DOWN, undefined, 'rate limit');
    dependency.failed(DOWN, undefined, 'sms counters');
    dependency.worked('rate limit');
    await settled();
    assert.equal(dependency.problem, DOWN);
    dependency.worked('sms counters');
    await settled();
    assert.equal(dependency.problem, null);
    assert.equal((await lines()).length, 2);
  });
});
