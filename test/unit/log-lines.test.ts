/**
 * The access log's own writing: a fixed line written as pino writes it, and the batch that
 * gathers lines before they reach stdout.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, describe, it } from 'node:test';
import { pino } from 'pino';
import { fixedInfoLine } from '../../src/logging/fixed-line.js';
import { LineBatch } from '../../src/logging/line-batch.js';
import { createLogger } from '../../src/logging/logger.js';

/** A stream that keeps what it is given, line by line. */
function collector(): { stream: PassThrough; lines: () => string[] } {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  return { stream, lines: () => text.split('\n').filter((l) => l !== '') };
}

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('fixedInfoLine', () => {
  it('writes the bytes logger.info writes, bindings, base and redaction settings included', async () => {
    const { stream, lines } = collector();
    const log = pino(
      {
        level: 'info',
        base: { app: 'student-info-service', worker: 3 },
        timestamp: () => ',"time":"2026-11-26T00:00:00.000Z"',
        redact: { paths: ['phone', 'code'], censor: '***' },
      },
      stream,
    );
    const child = log.child({ service: 'PushNotificationMobile', operation: 'GetTokenDevice', binding: 'soap11' });
    child.info({ requestId: 'a1b2c3d4-z', method: 'POST', status: 200, ms: 0.125 }, 'request');
    fixedInfoLine(child, 'request')(',"requestId":"a1b2c3d4-z","method":"POST","status":200,"ms":0.125');
    await tick();
    const [byPino, byUs] = lines();
    assert.ok(byPino !== undefined && byPino.includes('"service":"PushNotificationMobile"'), byPino);
    assert.equal(byUs, byPino);
  });

  it('writes through the service logger, to the same stream, in order with its other lines', async () => {
    const { stream, lines } = collector();
    const log = createLogger('info', stream);
    const line = fixedInfoLine(log.child({ service: 'S' }), 'request');
    log.info('before');
    line(',"status":200');
    log.warn('after');
    await tick();
    const parsed = lines().map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.deepEqual(
      parsed.map((p) => [p['msg'], p['level'], p['app'], p['service'], p['status']]),
      [
        ['before', 30, 'student-info-service', undefined, undefined],
        ['request', 30, 'student-info-service', 'S', 200],
        ['after', 40, 'student-info-service', undefined, undefined],
      ],
    );
    assert.match(String(parsed[1]!['time']), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });
});

describe('LineBatch', () => {
  let dir = '';
  afterEach(() => rmSync(dir, { recursive: true, force: true }));
  const sinkFile = (): { file: string; sink: ReturnType<typeof pino.destination> } => {
    dir = mkdtempSync(join(tmpdir(), 'sis-line-batch-'));
    const file = join(dir, 'log');
    return { file, sink: pino.destination({ dest: file, sync: true }) };
  };

  it('holds lines until enough wait, then writes them in order, whole', () => {
    const { file, sink } = sinkFile();
    const batch = new LineBatch(sink, 100, 60_000);
    for (let i = 0; i < 4; i++) batch.write(`line ${i} ${'x'.repeat(14)}\n`);
    assert.equal(readFileSync(file, 'utf8'), '', 'four lines of 22 characters stay under 100');
    batch.write('line 4 ünïcödé\n');
    assert.equal(readFileSync(file, 'utf8').split('\n').length, 6);
    batch.write('line 5\n');
    batch.flushSync();
    const text = readFileSync(file, 'utf8');
    assert.deepEqual(
      text.split('\n').map((l) => l.slice(0, 6)),
      ['line 0', 'line 1', 'line 2', 'line 3', 'line 4', 'line 5', ''],
    );
    assert.ok(text.includes('ünïcödé'));
  });

  it('writes what waits after the pause when traffic is light, and on flush', async () => {
    const { file, sink } = sinkFile();
    const batch = new LineBatch(sink, 4096, 50);
    batch.write('alone\n');
    assert.equal(readFileSync(file, 'utf8'), '');
    await new Promise((resolve) => setTimeout(resolve, 150));
    assert.equal(readFileSync(file, 'utf8'), 'alone\n');
    batch.write('flushed\n');
    await new Promise<void>((resolve, reject) => batch.flush((err) => (err ? reject(err) : resolve())));
    assert.equal(readFileSync(file, 'utf8'), 'alone\nflushed\n');
  });
});
