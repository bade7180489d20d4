/**
 * W3C trace context: a request's `traceparent` is read, its trace id put on the access log line
 * and the header passed on to the legacy service in a comparison when it is valid (in its version
 * 00 form; an invalid one, a 10 KB one, not at all); with OTEL_EXPORTER_OTLP_ENDPOINT
 * set, one server span per request reaches a real local OTLP/HTTP receiver, named and described by
 * the RPC conventions, child of the caller's span, and the legacy call is a child of ours.
 * Without the setting none of OpenTelemetry's SDK is loaded. AuthCode's SMS, delivered later by
 * the outbox (SQLite and PostgreSQL), carries the request's trace to the gateway while tracing, and
 * never a caller's own header.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { logCollector } from '../helpers/log-collector.js';
import { eventually, startSmsGateway } from '../helpers/sms-gateway.js';
import type { ReceivedSms, SmsGateway } from '../helpers/sms-gateway.js';
import { cleanupTargets, postgresTarget, sqliteTarget } from '../helpers/store-targets.js';
import { repoRoot, startTestServer } from '../helpers/test-server.js';
import type { TestServer } from '../helpers/test-server.js';

after(() => cleanupTargets());

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT_ID = '00f067aa0ba902b7';
const TRACEPARENT = `00-${TRACE_ID}-${PARENT_ID}-01`;
const TOKEN = '/PushNotificationMobile.asmx/GetTokenDevice?id=1';

/** A local HTTP server that records what it receives and answers 200 with a fixed body. */
async function recorder(): Promise<{
  url: string;
  received: { url: string; headers: IncomingHttpHeaders; body: string }[];
  close(): Promise<void>;
}> {
  const received: { url: string; headers: IncomingHttpHeaders; body: string }[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString() });
      res.writeHead(200, { 'content-type': 'text/xml; charset=utf-8' }).end('<string>x</string>');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

async function get(url: string, headers: Record<string, string> = {}): Promise<void> {
  const res = await fetch(`${url}${TOKEN}`, { headers });
  assert.equal(res.status, 200);
  await res.arrayBuffer();
}

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: { key: string; value: Record<string, unknown> }[];
}

function spansOf(bodies: string[]): OtlpSpan[] {
  return bodies.flatMap((b) => {
    const json = JSON.parse(b) as { resourceSpans: { scopeSpans: { spans: OtlpSpan[] }[] }[] };
    return json.resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans));
  });
}

const attribute = (span: OtlpSpan, key: string): unknown => {
  const value = span.attributes.find((a) => a.key === key)?.value;
  return value === undefined ? undefined : Object.values(value)[0];
};

describe('trace context', () => {
  it('puts the caller’s trace id on the log line and passes a valid traceparent to the legacy service', async () => {
    const legacy = await recorder();
    const later = `01-${TRACE_ID}-${PARENT_ID}-01-${'x'.repeat(10_000)}`;
    const log = logCollector();
    const server = await startTestServer({
      env: { LOG_LEVEL: 'info', SIS_SHADOW: 'compare', SIS_LEGACY_URL: legacy.url, SIS_SHADOW_RECHECK: 'off' },
      logDestination: log.stream,
    });
    try {
      await get(server.url, { traceparent: TRACEPARENT });
      await get(server.url);
      await get(server.url, { traceparent: `00-${'0'.repeat(32)}-${PARENT_ID}-01`, tracestate: 'a=1' });
      await get(server.url, { traceparent: `${TRACEPARENT}${'-x'.repeat(5_000)}`, tracestate: 'a=1' });
      await get(server.url, { traceparent: later });
      await eventually(() => (legacy.received.length === 5 ? true : undefined));
    } finally {
      await server.close();
      await legacy.close();
    }
    const requests = log.lines.filter((l) => l['msg'] === 'request');
    assert.deepEqual(
      requests.map((l) => l['traceId']),
      [TRACE_ID, undefined, undefined, undefined, TRACE_ID],
      'the trace id of a valid traceparent only',
    );
    // The copies go in the background: in any order. Each the valid one (the later version's in
    // its version 00 form), or none, and no tracestate without its traceparent.
    const sent = legacy.received.map((r) => `${r.headers['traceparent']} ${r.headers['tracestate']}`);
    assert.deepEqual(sent.sort(), [
      `${TRACEPARENT} undefined`,
      `${TRACEPARENT} undefined`,
      'undefined undefined',
      'undefined undefined',
      'undefined undefined',
    ]);
  });

  it('sends a span per request over OTLP/HTTP and makes the legacy call its child', async () => {
    const collector = await recorder();
    const legacy = await recorder();
    const log = logCollector();
    const server = await startTestServer({
      env: {
        LOG_LEVEL: 'info',
        OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
        SIS_SHADOW: 'compare',
        // One legacy call per request: a read that differs is not asked again.
        SIS_SHADOW_RECHECK: 'off',
        SIS_LEGACY_URL: legacy.url,
      },
      logDestination: log.stream,
    });
    try {
      await get(server.url, { traceparent: TRACEPARENT });
      await get(server.url);
      await eventually(() => (legacy.received.length === 2 ? true : undefined));
    } finally {
      await server.close(); // sends the spans still batched
      await legacy.close();
      await collector.close();
    }
    assert.ok(collector.received.every((r) => r.url === '/v1/traces'));
    const spans = spansOf(collector.received.map((r) => r.body));
    assert.equal(spans.length, 2, JSON.stringify(spans));
    const [child, root] = spans.sort((a) => (a.traceId === TRACE_ID ? -1 : 1));
    for (const span of [child!, root!]) {
      assert.equal(span.name, 'PushNotificationMobile/GetTokenDevice');
      assert.equal(span.kind, 2, 'SERVER');
      assert.equal(attribute(span, 'rpc.system'), 'asmx');
      assert.equal(attribute(span, 'rpc.service'), 'PushNotificationMobile');
      assert.equal(attribute(span, 'rpc.method'), 'GetTokenDevice');
      assert.equal(attribute(span, 'sis.binding'), 'httpget');
      assert.equal(Number(attribute(span, 'http.response.status_code')), 200);
    }
    assert.equal(child!.traceId, TRACE_ID);
    assert.equal(child!.parentSpanId, PARENT_ID);
    assert.notEqual(root!.traceId, TRACE_ID);
    assert.ok(root!.parentSpanId === undefined || root!.parentSpanId === '');
    // The legacy service is called in our span; the log lines name the trace.
    const sent = legacy.received.map((r) => r.headers['traceparent']);
    assert.deepEqual(
      sent.sort(),
      [`00-${TRACE_ID}-${child!.spanId}-01`, `00-${root!.traceId}-${root!.spanId}-01`].sort(),
    );
    const requests = log.lines.filter((l) => l['msg'] === 'request');
    assert.deepEqual(requests.map((l) => l['traceId']).sort(), [TRACE_ID, root!.traceId].sort());
  });

  it('loads no OpenTelemetry SDK module unless the endpoint is set', async () => {
    const script = `
      import { createRequire } from 'node:module';
      const { startTestServer } = await import(${JSON.stringify(`${repoRoot}dist/test/helpers/test-server.js`)});
      const server = await startTestServer({ env: process.argv[1] ? { OTEL_EXPORTER_OTLP_ENDPOINT: process.argv[1] } : {} });
      await fetch(server.url + ${JSON.stringify(TOKEN)}).then((r) => r.arrayBuffer());
      // The API alone is prom-client's (its CPU metric): the SDK, resources and exporter are ours.
      const loaded = Object.keys(createRequire(import.meta.url).cache).filter(
        (f) => f.includes('/@opentelemetry/') && !f.includes('/@opentelemetry/api/'),
      );
      await server.close();
      console.log(loaded.length);
    `;
    const run = async (endpoint: string): Promise<number> =>
      Number(
        (await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script, endpoint])).stdout.trim(),
      );
    assert.equal(await run(''), 0);
    assert.ok((await run('http://127.0.0.1:9')) > 0, 'the check sees the modules when they are loaded');
  });
});

const SMS_SECRET = 'trace-test-secret-of-at-least-32-bytes';

async function authCode(server: TestServer, phone: string, headers: Record<string, string> = {}): Promise<void> {
  const res = await fetch(
    `${server.url}/AuthCodeSending.asmx/AuthCode?code=123456&phone=${encodeURIComponent(phone)}`,
    {
      headers,
    },
  );
  assert.equal(res.status, 200, await res.text());
}

/** Each delivered message by its phone. */
async function deliveredByPhone(gateway: SmsGateway, n: number): Promise<Map<string, ReceivedSms>> {
  return new Map((await gateway.delivered(n)).map((m) => [m.phone, m]));
}

for (const target of [sqliteTarget, postgresTarget]) {
  describe(`the SMS delivery's trace context on ${target.name}`, { skip: target.skip ?? false }, () => {
    const smsEnv = async (gateway: SmsGateway): Promise<Record<string, string>> => ({
      SIS_DATABASE_URL: (await target.fresh()).url,
      SIS_SMS_WEBHOOK_URL: gateway.url,
      SIS_SMS_WEBHOOK_SECRET: SMS_SECRET,
      SIS_OUTBOX_POLL_MS: '50',
    });

    it('sends no traceparent with the SMS while not tracing, whatever the caller sent', async () => {
      const gateway = await startSmsGateway(SMS_SECRET);
      const server = await startTestServer({ env: await smsEnv(gateway) });
      try {
        await authCode(server, '+966501110001', { traceparent: TRACEPARENT });
        await authCode(server, '+966501110002');
        await authCode(server, '+966501110003', { traceparent: `00-${'0'.repeat(32)}-${PARENT_ID}-01` });
        const sent = await deliveredByPhone(gateway, 3);
        assert.ok([...sent.values()].every((m) => m.signed));
        // The gateway is a third party: a caller's own header never reaches it.
        assert.equal(sent.get('+966501110001')!.traceparent, undefined, 'a valid one is not passed on');
        assert.equal(sent.get('+966501110002')!.traceparent, undefined, 'no trace: no header');
        assert.equal(sent.get('+966501110003')!.traceparent, undefined, 'an invalid one is not passed on');
      } finally {
        await server.close();
        await gateway.close();
      }
    });

    it('makes the delivery a child of the request’s span while tracing', async () => {
      const gateway = await startSmsGateway(SMS_SECRET);
      const collector = await recorder();
      const server = await startTestServer({
        env: { ...(await smsEnv(gateway)), OTEL_EXPORTER_OTLP_ENDPOINT: collector.url },
      });
      let sent: Map<string, ReceivedSms>;
      try {
        await authCode(server, '+966501110004', { traceparent: TRACEPARENT });
        await authCode(server, '+966501110005');
        sent = await deliveredByPhone(gateway, 2);
      } finally {
        await server.close(); // sends the spans still batched
        await gateway.close();
        await collector.close();
      }
      const spans = spansOf(collector.received.map((r) => r.body)).filter((s) => s.name === 'AuthCodeSending/AuthCode');
      assert.equal(spans.length, 2, JSON.stringify(spans));
      const child = spans.find((s) => s.traceId === TRACE_ID)!;
      const root = spans.find((s) => s.traceId !== TRACE_ID)!;
      assert.equal(sent.get('+966501110004')!.traceparent, `00-${TRACE_ID}-${child.spanId}-01`);
      assert.equal(sent.get('+966501110005')!.traceparent, `00-${root.traceId}-${root.spanId}-01`);
    });
  });
}
