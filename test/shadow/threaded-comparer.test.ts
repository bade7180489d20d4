/**
 * Compare mode's worker thread against a real legacy HTTP server: exchanges judged there come
 * back as verdicts (identical, different with an example, legacy-failed); a comparison that fails
 * there is skipped and logged; and a worker that dies is replaced: what it held is answered
 * `skipped`, never left waiting, and the next job is compared by a new one.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Logger } from '../../src/logging/logger.js';
import type { ComparisonJob } from '../../src/shadow/comparison.js';
import { ThreadedComparer } from '../../src/shadow/threaded-comparer.js';
import { BY_POSITION } from '../../src/shadow/xml-diff.js';
import { closedPort } from '../helpers/sms-gateway.js';

const ANSWER = '<a>legacy</a>';
const errors: string[] = [];
/** The one method the comparer logs with, kept for the assertions. */
const log = { error: (_fields: unknown, message: string) => void errors.push(message) } as unknown as Logger;

function job(ours: string, body: Buffer | null = null): ComparisonJob {
  return {
    labels: { service: 'Svc', operation: 'Op', binding: 'httpget' },
    forward: {
      method: body === null ? 'GET' : 'POST',
      relativeUrl: 'Svc.asmx/Op',
      rawHeaders: ['Host', 'client.example'],
      body,
      clientAddress: '10.0.0.1',
      write: false,
      copy: true,
    },
    url: '/Svc.asmx/Op',
    ours: { status: 200, contentType: 'text/xml; charset=utf-8', cacheControl: 'private', body: Buffer.from(ours) },
    metadata: false,
    personal: null,
  };
}

/** A comparer for `legacyUrl`, started (its worker ready) for `body`, closed after it. */
async function withComparer(legacyUrl: string, body: (comparer: ThreadedComparer) => Promise<void>): Promise<void> {
  const comparer = new ThreadedComparer(
    {
      legacyUrl,
      client: { timeoutMs: 2000, maxAnswerBytes: 1000, maxSockets: 4 },
      rules: { accept: [], lists: BY_POSITION, recheck: false },
    },
    log,
  );
  try {
    await comparer.ready();
    await body(comparer);
  } finally {
    await comparer.close();
  }
}

describe('the comparison worker', () => {
  const server = createServer((req, res) => {
    req.resume().on('end', () => {
      res.writeHead(200, { 'Content-Type': 'text/xml; charset=utf-8', 'Cache-Control': 'private' });
      res.end(ANSWER);
    });
  });
  let url = '';
  before(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('judges exchanges on its thread and sends the verdicts back', async () => {
    await withComparer(url, async (comparer) => {
      const [same, other, posted] = await Promise.all([
        comparer.compare(job(ANSWER)),
        comparer.compare(job('<a>ours</a>')),
        comparer.compare(job(ANSWER, Buffer.from('id=1'))),
      ]);
      assert.equal(same.judgement.result, 'identical');
      assert.equal(posted.judgement.result, 'identical');
      assert.equal(other.judgement.result, 'different');
      assert.deepEqual(other.judgement.example?.paths, [{ path: '/a', legacy: 'legacy', ours: 'ours' }]);
      assert.ok(same.seconds > 0);
    });
  });

  it('answers legacy-failed for a legacy that refuses', async () => {
    const port = await closedPort();
    await withComparer(`http://127.0.0.1:${port}/`, async (comparer) => {
      assert.equal((await comparer.compare(job(ANSWER))).judgement.result, 'legacy-failed');
    });
  });

  it('skips a comparison that fails on its thread, says why, and goes on', async () => {
    await withComparer(url, async (comparer) => {
      const before = errors.length;
      // No path to send: the comparison itself throws there (a bug of ours, not the legacy's failure).
      const broken = { ...job(ANSWER), forward: { ...job(ANSWER).forward, relativeUrl: undefined } };
      const verdict = await comparer.compare(broken as unknown as ComparisonJob);
      assert.equal(verdict.judgement.result, 'skipped');
      assert.deepEqual(errors.slice(before), ['shadow: a comparison failed']);
      assert.equal((await comparer.compare(job(ANSWER))).judgement.result, 'identical');
    });
  });

  it('replaces a worker that died: its jobs are skipped, the next is compared by a new one', async () => {
    await withComparer(url, async (comparer) => {
      // A job the worker cannot read (no body to revive) throws on its thread, which then ends.
      const broken = { ...job(ANSWER), ours: { ...job(ANSWER).ours, body: undefined } } as unknown as ComparisonJob;
      const lost = await comparer.compare(broken);
      assert.equal(lost.judgement.result, 'skipped');
      assert.ok(
        errors.some((m) => m.includes('comparison worker failed')),
        errors.join('; '),
      );
      assert.equal((await comparer.compare(job(ANSWER))).judgement.result, 'identical');
    });
  });
});
