/**
 * "An operation is one entry", proven: a real server given test-only operations in a service file
 * of their own (ClassRegistry.asmx, test/helpers/class-registry.ts) beside the contract's, with no
 * other edit, routes them over the four bindings through the same binding loop as the contract's
 * (test/service/operations.test.ts), and its gate and metrics know them. The WSDL, disco and help pages are
 * in test/wire/metadata-extension.test.ts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { operations } from '../src/operations/index.js';
import { missingCases, operationsOverEveryBinding } from './helpers/binding-loop.js';
import { CLASS_REGISTRY, CLASS_REGISTRY_CASES, classRegistry } from './helpers/class-registry.js';
import { CONTRACT_CASES, CONTRACT_DATASET } from './helpers/contract-cases.js';
import { rawRequest } from './helpers/raw-http.js';
import { startTestServer } from './helpers/test-server.js';
import type { TestServer } from './helpers/test-server.js';

const served = [...operations, ...classRegistry];

operationsOverEveryBinding('the contract and ClassRegistry.asmx', {
  operations: served,
  cases: { ...CONTRACT_CASES, ...CLASS_REGISTRY_CASES },
  dataset: CONTRACT_DATASET,
});

describe('the binding loop with a sixth operation', () => {
  it('names an operation served without cases, and cases for an operation not served', () => {
    assert.deepEqual(
      missingCases(served, CONTRACT_CASES),
      classRegistry.map((o) => `${CLASS_REGISTRY}.${o.name} has no binding case`),
    );
    assert.deepEqual(
      missingCases(operations, { ...CONTRACT_CASES, ...CLASS_REGISTRY_CASES }).sort(),
      classRegistry.map((o) => `cases for ${o.name}, which is not served`).sort(),
    );
  });
});

/** ListClasses('http://a.example', '8') in SOAP 1.1: the char as its UTF-16 code. */
const LIST_CLASSES_8 =
  '<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body>' +
  '<ListClasses xmlns="http://tempuri.org/"><school_base_url>http://a.example</school_base_url><grade>56</grade></ListClasses>' +
  '</soap:Body></soap:Envelope>';

describe('ClassRegistry.asmx behind the gate, with no other edit', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({
      operations: served,
      // Keys required for every service file: the gate's list of service files comes from the operations.
      env: { SIS_API_KEYS: `sha256:${'ab'.repeat(32)}` },
    });
  });
  after(() => server.close());

  it('is behind the API key like the contract service files', async () => {
    for (const path of [
      `/${CLASS_REGISTRY}.asmx/GetClassTitle?class_id=7A`,
      '/PushNotificationMobile.asmx/GetTokenDevice?id=1',
    ]) {
      const res = await rawRequest(server.url, { method: 'GET', path });
      assert.equal(res.status, 401, path);
    }
  });
});

describe('ClassRegistry.asmx routing and metrics, with no other edit', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ operations: served });
  });
  after(() => server.close());

  it('SOAP 1.1 without SOAPAction is routed by the body element', async () => {
    const res = await rawRequest(server.url, {
      method: 'POST',
      path: `/${CLASS_REGISTRY}.asmx`,
      headers: [['Content-Type', 'text/xml; charset=utf-8']],
      body: LIST_CLASSES_8,
    });
    assert.equal(res.status, 200);
    assert.match(res.body.toString(), /<ListClassesResult><ClassInfo><id>8A<\/id>/);
  });

  it('the service file name matches case-insensitively, operation names do not', async () => {
    const ok = await rawRequest(server.url, { method: 'GET', path: '/classregistry.ASMX/GetClassTitle?class_id=8A' });
    assert.equal(ok.status, 200);
    assert.match(ok.body.toString(), /<string xmlns="http:\/\/tempuri.org\/">علي<\/string>/);
    const wrongCase = await rawRequest(server.url, {
      method: 'GET',
      path: `/${CLASS_REGISTRY}.asmx/getclasstitle?class_id=8A`,
    });
    assert.equal(wrongCase.status, 500);
  });

  it('an operation of another service file is not found in it', async () => {
    const res = await rawRequest(server.url, { method: 'GET', path: `/${CLASS_REGISTRY}.asmx/GetTokenDevice?id=1` });
    assert.equal(res.status, 500);
    assert.match(res.body.toString(), /GetTokenDevice/);
  });

  it('/metrics counts its requests by service file, operation and binding', async () => {
    const counted = async (): Promise<number> => {
      const metrics = (await rawRequest(server.url, { method: 'GET', path: '/metrics' })).body.toString();
      const line = `sis_requests_total{service="${CLASS_REGISTRY}",operation="ArchiveClass",binding="httppost",status="200"} `;
      const at = metrics.indexOf(line);
      return at < 0 ? 0 : Number.parseInt(metrics.slice(at + line.length), 10);
    };
    const before = await counted();
    const res = await rawRequest(server.url, {
      method: 'POST',
      path: `/${CLASS_REGISTRY}.asmx/ArchiveClass`,
      headers: [['Content-Type', 'application/x-www-form-urlencoded']],
      body: 'class_id=metrics',
    });
    assert.equal(res.status, 200);
    assert.equal(await counted(), before + 1);
  });
});
