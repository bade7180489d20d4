/**
 * W3C traceparent as the spec reads it (https://www.w3.org/TR/trace-context/#traceparent-header):
 * what is taken, what is ignored (and so starts afresh), and the header written for a call on.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatTraceparent, parseTraceparent, withTraceparent } from '../../src/observe/trace-context.js';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT = '00f067aa0ba902b7';

describe('traceparent', () => {
  it('reads a valid header', () => {
    assert.deepEqual(parseTraceparent(`00-${TRACE}-${PARENT}-01`), { traceId: TRACE, parentId: PARENT, flags: 1 });
    assert.deepEqual(parseTraceparent(` 00-${TRACE}-${PARENT}-00 `), { traceId: TRACE, parentId: PARENT, flags: 0 });
    // A later version is read by the fields it shares with 00, whatever follows.
    assert.deepEqual(parseTraceparent(`cc-${TRACE}-${PARENT}-01-what-the-future-holds`), {
      traceId: TRACE,
      parentId: PARENT,
      flags: 1,
    });
  });

  it('ignores an absent or invalid one', () => {
    for (const bad of [
      undefined,
      '',
      `ff-${TRACE}-${PARENT}-01`,
      `00-${TRACE.toUpperCase()}-${PARENT}-01`,
      `00-${'0'.repeat(32)}-${PARENT}-01`,
      `00-${TRACE}-${'0'.repeat(16)}-01`,
      `00-${TRACE}-${PARENT}-01-extra`,
      `00-${TRACE.slice(1)}-${PARENT}-01`,
      `00_${TRACE}_${PARENT}_01`,
    ])
      assert.equal(parseTraceparent(bad), null, String(bad));
  });

  it('writes the header for a call on, replacing the caller’s (and its tracestate)', () => {
    const ours = formatTraceparent(TRACE, 'b7ad6b7169203331', 1);
    assert.equal(ours, `00-${TRACE}-b7ad6b7169203331-01`);
    assert.deepEqual(
      withTraceparent(
        ['Host', 'x', 'TraceParent', `00-${TRACE}-${PARENT}-01`, 'tracestate', 'a=b', 'Accept', '*/*'],
        ours,
      ),
      ['Host', 'x', 'Accept', '*/*', 'traceparent', ours],
    );
  });
});
