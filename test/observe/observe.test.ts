/** /healthz, /readyz, /metrics and the request log, over real HTTP. */
import assert from 'node:assert/strict';
import { Agent, get } from 'node:http';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { formatLine } from '../../src/logging/pretty-log.js';
import { errSerializer, redactUrl } from '../../src/logging/redact.js';
import { RequestMetrics } from '../../src/observe/metrics.js';
import { operations } from '../../src/operations/index.js';
import type { Operation } from '../../src/operations/index.js';
import { withOverrides } from '../../src/store/forward-store.js';
import { openStore } from '../../src/store/open/open-store.js';
import type { SqlStore } from '../../src/store/sql/sql-store.js';
import { bindingClients } from '../helpers/binding-clients.js';
import { eventually } from '../helpers/eventually.js';
import { rawRequest } from '../helpers/raw-http.js';
import { startServe, stopServe } from '../helpers/serve-process.js';
import { startTestServer } from '../helpers/test-server.js';
import type { TestServer } from '../helpers/test-server.js';

const op = (name: string): Operation => operations.find((o) => o.name === name)!;
const PHONE = '0501234567';
const CODE = '987654';
const dataset = { devices: [{ id: '1', token: 'tok-1' }] };

function collector(): { lines: Record<string, unknown>[]; raw: string[]; stream: Writable } {
  const raw: string[] = [];
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      raw.push(chunk.toString());
      for (const l of chunk.toString().split('\n')) if (l !== '') lines.push(JSON.parse(l) as Record<string, unknown>);
      cb();
    },
  });
  return { lines, raw, stream };
}

describe('health, readiness and metrics', () => {
  let server: TestServer;
  let based: TestServer;
  before(async () => {
    server = await startTestServer({ dataset });
    based = await startTestServer({ dataset, env: { SIS_BASE_PATH: '/School/' } });
  });
  after(async () => {
    await server.close();
    await based.close();
  });

  it('/healthz and /readyz answer 200 at the root, whatever the base path', async () => {
    const server = based;
    for (const [path, text] of [
      ['/healthz', 'ok\n'],
      ['/readyz', 'ready\n'],
      ['/healthz?probe=1', 'ok\n'],
    ] as const) {
      const res = await fetch(server.url + path);
      assert.equal(res.status, 200, path);
      assert.equal(await res.text(), text);
      assert.equal(res.headers.get('cache-control'), 'no-store');
      assert.ok(res.headers.get('x-request-id'));
    }
    assert.equal((await fetch(`${server.url}/School/healthz`)).status, 404, 'not under the base path');
    assert.equal((await fetch(`${server.url}/healthz`, { method: 'POST' })).status, 405);
  });

  it('/metrics counts requests by service, operation, binding and status, and times them', async () => {
    for (const client of bindingClients) {
      const { res } = await client.call(server.url, op('GetTokenDevice'), { id: '1' });
      assert.equal(res.status, 200, client.name);
    }
    await fetch(`${server.url}/Nope.asmx`);
    const res = await fetch(`${server.url}/metrics`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    for (const binding of ['soap11', 'soap12', 'httpget', 'httppost']) {
      const labels = `service="PushNotificationMobile",operation="GetTokenDevice",binding="${binding}"`;
      assert.ok(text.includes(`sis_requests_total{${labels},status="200"} 1\n`), binding);
      assert.ok(text.includes(`sis_request_duration_seconds_count{${labels}} 1\n`), binding);
      assert.ok(text.includes(`sis_request_duration_seconds_bucket{${labels},le="+Inf"} 1\n`), binding);
    }
    assert.ok(text.includes('sis_requests_total{service="",operation="",binding="",status="404"} 1\n'));
    assert.match(text, /^# TYPE sis_request_duration_seconds histogram$/m);
    assert.match(text, /^sis_requests_in_flight 0$/m);
    assert.match(text, /^sis_db_calls_in_flight 0$/m);
    assert.match(text, /^process_cpu_user_seconds_total /m, 'Node default metrics');
    assert.match(text, /^nodejs_eventloop_lag_seconds /m);
    assert.ok(!text.includes('/healthz'), 'ops endpoints are not counted');
  });

  it('the histogram buckets are cumulative and end at the count', () => {
    const m = new RequestMetrics();
    m.observe('S', 'Op', 'soap11', 200, 0.0005);
    m.observe('S', 'Op', 'soap11', 200, 0.003);
    m.observe('S', 'Op', 'soap11', 500, 20);
    const buckets = m
      .histogramValues('h')
      .filter((v) => v.metricName === 'h_bucket')
      .map((v) => v.value);
    assert.deepEqual(buckets, [1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 3]);
    assert.deepEqual(
      m.counterValues().map((v) => [v.labels['status'], v.value]),
      [
        [200, 2],
        [500, 1],
      ],
    );
  });
});

describe('/readyz when the database does not answer', () => {
  let server: TestServer;
  let inner: SqlStore;
  let down = false;
  let hang = false;
  const readyz = async (): Promise<string> => {
    const res = await fetch(`${server.url}/readyz`);
    return `${res.status} ${await res.text()}`;
  };
  before(async () => {
    inner = await openStore('sqlite::memory:');
    const flaky = withOverrides(inner, {
      ping: () =>
        hang
          ? new Promise<void>(() => undefined)
          : down
            ? Promise.reject(new Error('connect ECONNREFUSED 10.0.0.5:5432'))
            : inner.ping(),
    });
    server = await startTestServer({ store: flaky });
  });
  after(() => server.close());

  it('stays 200 while ping fails, naming the database, without the error details', async () => {
    assert.equal(await readyz(), '200 ready\n');
    down = true;
    // A database every instance shares is not a reason to leave rotation: there is nowhere better.
    assert.equal(await readyz(), '200 ready (degraded: database unavailable)\n');
    assert.equal((await fetch(`${server.url}/healthz`)).status, 200, 'still alive');
    down = false;
    // Back once it has answered for RECOVERY_SETTLE_MS with no failure (dependency-health.ts).
    assert.equal(await readyz(), '200 ready (degraded: database unavailable)\n', 'one answer is not yet recovery');
    await eventually(async () => assert.equal(await readyz(), '200 ready\n'));
  });

  it('answers at once when the ping hangs (a probe must not time out)', async () => {
    hang = true;
    const started = Date.now();
    assert.equal(await readyz(), '200 ready\n');
    assert.ok(Date.now() - started < 1500, 'answered before the ping gave up (2 s)');
    hang = false;
  });
});

describe('/readyz once a stop began', () => {
  it('answers 503 at once on a connection still open, whatever the database does', { timeout: 30_000 }, async () => {
    const s = await startServe('sqlite::memory:', { SIS_SHUTDOWN_GRACE_MS: '3000' });
    // One keep-alive connection, open before the stop: the only way to reach a draining instance.
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const readyz = (): Promise<string> =>
      new Promise((resolve, reject) => {
        get(`${s.url}/readyz`, { agent }, (res) => {
          let text = '';
          res.on('data', (d: Buffer) => (text += d.toString()));
          res.on('end', () => resolve(`${res.statusCode} ${text}`));
        }).on('error', reject);
      });
    try {
      assert.equal(await readyz(), '200 ready\n');
      const stopped = stopServe(s);
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.equal(await readyz(), '503 not ready: shutting down\n');
      agent.destroy();
      await stopped;
    } finally {
      agent.destroy();
      await stopServe(s);
    }
  });
});

describe('the request log', () => {
  const log = collector();
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ dataset, env: { LOG_LEVEL: 'info' }, logDestination: log.stream });
  });
  after(() => server.close());

  it('has one line per request with its id, service, operation, binding, status and duration', async () => {
    const res = await fetch(`${server.url}/PushNotificationMobile.asmx/GetTokenDevice?id=1`);
    const id = res.headers.get('x-request-id');
    const line = log.lines.find((l) => l['requestId'] === id);
    assert.ok(line);
    assert.equal(line['msg'], 'request');
    assert.equal(line['app'], 'student-info-service');
    assert.deepEqual(
      [line['service'], line['operation'], line['binding'], line['status'], line['method']],
      ['PushNotificationMobile', 'GetTokenDevice', 'httpget', 200, 'GET'],
    );
    assert.equal(typeof line['ms'], 'number');
  });

  it('never shows a phone or code: not from the query, a form or a SOAP body, nor an unrouted path', async () => {
    const before = log.raw.length;
    for (const client of bindingClients) {
      const { res } = await client.call(server.url, op('AuthCode'), { code: CODE, phone: PHONE });
      assert.equal(res.status, 200, client.name);
    }
    await fetch(`${server.url}/AuthCodeSending.asmx/AuthCode?code=${CODE}&phone=${PHONE}`);
    await fetch(`${server.url}/AuthCodeSending.asmx/AuthCode/${PHONE}?code=${CODE}`);
    await fetch(`${server.url}/sms/${PHONE}/send?phone=%2B${PHONE}&${CODE}`);
    await rawRequest(server.url, {
      method: 'GET',
      path: `/x/${PHONE.split('')
        .map((c) => `%3${c}`)
        .join('')}`,
    });
    const text = log.raw.slice(before).join('');
    assert.equal(log.lines.filter((l) => l['msg'] === 'request').length >= 8, true);
    assert.ok(!text.includes(PHONE) && !text.includes(CODE) && !text.includes('%35%30%31'), text);
    assert.ok(text.includes('"path":"/sms/***/send?phone=***&***"'), 'unrouted paths are logged, masked');
  });

  it('redactUrl masks query values and long digit runs, keeps the rest', () => {
    assert.equal(redactUrl('/X.asmx/Op?phone=0501234567&code=12'), '/X.asmx/Op?phone=***&code=***');
    assert.equal(redactUrl('/a/b-12/+972 50-123-4567/c'), '/a/b-12/+***/c');
    assert.equal(redactUrl('/plain'), '/plain');
  });

  it('errors keep their causes, and lose the fields where drivers echo values', () => {
    const cause = Object.assign(new Error('duplicate key value violates unique constraint "auth_codes_pkey"'), {
      code: '23505',
      detail: `Key (phone)=(${PHONE}) already exists.`,
    });
    const out = errSerializer(new Error('insert failed', { cause })) as unknown as Record<string, unknown>;
    assert.match(String(out['message']), /insert failed: duplicate key/);
    assert.match(String(out['stack']), /caused by: Error: duplicate key/);
    assert.ok(!JSON.stringify(out).includes(PHONE));
    const direct = errSerializer(cause) as unknown as Record<string, unknown>;
    assert.equal(direct['code'], '23505');
    assert.equal(direct['detail'], undefined);
  });

  it('a terminal gets readable lines, errors with their stack', () => {
    const line = JSON.stringify({
      level: 50,
      time: '2026-01-02T03:04:05.678Z',
      app: 'x',
      msg: 'operation failed',
      requestId: 'a-1',
      status: 500,
      err: { message: 'boom', stack: 'Error: boom\n    at f' },
    });
    assert.equal(
      formatLine(line, false),
      '03:04:05.678 ERROR operation failed requestId=a-1 status=500\n  Error: boom\n      at f\n',
    );
    assert.equal(formatLine('not json', false), 'not json\n');
  });
});
