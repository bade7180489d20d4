/**
 * Micro-benchmark cases of the pieces a request passes through once its answer is known: the
 * reply written to node:http, the access-log line, the metrics. Each sits beside what the
 * necessary-work server does instead, so a regression shows in the piece it happened in.
 */
import { openSync } from 'node:fs';
import { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { Duplex } from 'node:stream';
import { pino } from 'pino';
import type { Outcome } from '../../src/bindings/types.js';
import { RequestLog } from '../../src/http/request-log.js';
import { writeReply } from '../../src/http/write-reply.js';
import { LOG_BUFFER_BYTES, createLogger } from '../../src/logging/logger.js';
import { RequestMetrics } from '../../src/observe/metrics.js';
import { services } from '../../src/operations/index.js';
import { SOAP11_NS } from '../scenarios/asmx-xml.js';
import { soapTokenAnswer } from '../scenarios/expected-answers.js';
import type { MicroCase } from './measure.js';

const TEXT_XML = 'text/xml; charset=utf-8';
const ANSWER = soapTokenAnswer(SOAP11_NS);

/** A connection that takes every byte and keeps none: node:http's work without the socket's. */
function sinkSocket(): Duplex {
  return new Duplex({
    read() {},
    write(_chunk, _encoding, done) {
      done();
    },
    writev(_chunks, done) {
      done();
    },
  });
}

/** A response on the sink for a keep-alive HTTP/1.1 POST; resolves once node:http has finished it. */
function respond(sink: Duplex, req: IncomingMessage, write: (res: ServerResponse) => void): Promise<void> {
  const res = new ServerResponse(req);
  res.assignSocket(sink as unknown as Socket);
  const finished = new Promise<void>((done) => res.once('finish', done));
  write(res);
  return finished.then(() => res.detachSocket(sink as unknown as Socket));
}

function replyCases(): MicroCase[] {
  const sink = sinkSocket();
  const req = new IncomingMessage(sink as unknown as Socket);
  req.method = 'POST';
  req.httpVersionMajor = 1;
  req.httpVersionMinor = 1;
  const reply = { status: 200, contentType: TEXT_XML, body: ANSWER, invoked: true };
  const extras = { requestId: '2661a2cb-1', workerPid: null, closeAfter: false };
  const headers = { 'Cache-Control': 'private, max-age=0', 'Content-Type': TEXT_XML };
  return [
    {
      group: 'reply write',
      name: 'writeReply GetTokenDevice (SOAP 1.1), string body',
      fn: () => respond(sink, req, (res) => writeReply(res, reply, extras)),
      async: true,
    },
    {
      group: 'reply write',
      name: 'necessary: writeHead + end (same bytes, no request id)',
      fn: () =>
        respond(sink, req, (res) => {
          res.writeHead(200, { ...headers, 'Content-Length': Buffer.byteLength(ANSWER, 'utf8') });
          res.end(ANSWER, 'utf8');
        }),
      async: true,
    },
  ];
}

/** The access log as `npm start` writes it: info level, JSON, 4 KiB buffered writes, here to /dev/null. */
function logCases(): MicroCase[] {
  const destination = pino.destination({ dest: openSync('/dev/null', 'w'), sync: true, minLength: LOG_BUFFER_BYTES });
  const log = createLogger('info', destination as unknown as NodeJS.WritableStream, { format: 'json' });
  const requestLog = new RequestLog(log, 1);
  const sampled = new RequestLog(log, 100);
  const outcome: Outcome = {
    reply: { status: 200, contentType: TEXT_XML, body: ANSWER, invoked: true },
    service: 'PushNotificationMobile',
    operation: 'GetTokenDevice',
    binding: 'soap11',
  };
  const req = { requestId: '2661a2cb-1', method: 'POST', url: '/PushNotificationMobile.asmx', client: '198.51.100.7' };
  const sent = { kind: 'sent' } as const;
  const child = log.child({ service: outcome.service, operation: outcome.operation, binding: outcome.binding });
  const fields = { requestId: req.requestId, method: req.method, client: req.client, status: 200, ms: 0.4 };
  return [
    {
      group: 'log line',
      name: "pino: the same line through the route's child logger (child.info)",
      fn: () => child.info(fields, 'request'),
    },
    {
      group: 'log line',
      name: 'RequestLog.write, success (every line, the default)',
      fn: () => requestLog.write(req, outcome, 0.0004, sent),
    },
    {
      group: 'log line',
      name: 'RequestLog.write, success (SIS_LOG_SUCCESS_SAMPLE=100)',
      fn: () => sampled.write(req, outcome, 0.0004, sent),
    },
  ];
}

function metricsCases(): MicroCase[] {
  const metrics = new RequestMetrics(services);
  let started = performance.now();
  return [
    {
      group: 'metrics',
      name: 'RequestMetrics.observe (series ready)',
      fn: () => metrics.observe('PushNotificationMobile', 'GetTokenDevice', 'soap11', 200, 0.0004),
    },
    {
      group: 'metrics',
      name: 'duration (performance.now twice) + observe',
      fn: () => {
        const seconds = (performance.now() - started) / 1000;
        started = performance.now();
        metrics.observe('PushNotificationMobile', 'GetTokenDevice', 'soap11', 200, seconds);
      },
    },
  ];
}

export function pieceCases(): MicroCase[] {
  return [...replyCases(), ...logCases(), ...metricsCases()];
}
