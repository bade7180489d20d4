/**
 * SIS_RESULTS=extended over all four bindings: GetStudentsMarks answers the stored marks (one
 * subject, or all when SubjectID is empty or missing, in import order, null fields left out) and
 * GetServerKeyAndSender the push settings (nil when none are stored); the WSDL describes
 * ArrayOfMark and PushSettings. The documented mode, the default, stays as the spec shows it, data
 * or not; and the start warns when the server key is answered to anyone.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { operationsFor } from '../../src/operations/index.js';
import type { Operation, ResultsMode } from '../../src/operations/index.js';
import type { Dataset } from '../../src/store/store.js';
import { bindingClients } from '../helpers/binding-clients.js';
import { rawRequest } from '../helpers/raw-http.js';
import { startTestServer } from '../helpers/test-server.js';
import type { TestServer } from '../helpers/test-server.js';

const op = (mode: ResultsMode, name: string): Operation => operationsFor(mode).find((o) => o.name === name)!;
const marksOp = op('extended', 'GetStudentsMarks');
const pushOp = op('extended', 'GetServerKeyAndSender');

const EXTENDED_DATASET: Dataset = {
  students: [
    { id_student: '1', fullName: 'One', id_device: null, ShowActive: '1', school_base_url: 'http://a.example' },
  ],
  marks: [
    {
      id_student: '1',
      SubjectID: 'math',
      SubjectName: 'Mathematics',
      Mark: 'A',
      Term: 'T1',
      MarkDate: '2024-03-14',
      Note: 'Algebra & <geometry> 😀',
    },
    {
      id_student: '2',
      SubjectID: 'math',
      SubjectName: 'Mathematics',
      Mark: 'C',
      Term: 'T1',
      MarkDate: '2024-03-14',
      Note: null,
    },
    { id_student: '1', SubjectID: 'lit', SubjectName: 'Literature', Mark: 'B+', Term: 'T1', MarkDate: null, Note: '' },
    {
      id_student: '1',
      SubjectID: 'math',
      SubjectName: 'Mathematics',
      Mark: 'A-',
      Term: 'T2',
      MarkDate: '2024-06-11',
      Note: null,
    },
  ],
  push: { ServerKey: 'AAAA:key "with" <chars> & é', SenderId: '123456789012' },
};

const MATH_1 = [
  {
    id_student: '1',
    SubjectID: 'math',
    SubjectName: 'Mathematics',
    Mark: 'A',
    Term: 'T1',
    MarkDate: '2024-03-14',
    Note: 'Algebra & <geometry> 😀',
  },
  { id_student: '1', SubjectID: 'math', SubjectName: 'Mathematics', Mark: 'A-', Term: 'T2', MarkDate: '2024-06-11' },
];
const LIT_1 = { id_student: '1', SubjectID: 'lit', SubjectName: 'Literature', Mark: 'B+', Term: 'T1', Note: '' };

for (const client of bindingClients) {
  describe(`extended results over ${client.name}`, () => {
    let server: TestServer;
    let empty: TestServer;
    before(async () => {
      server = await startTestServer({ env: { SIS_RESULTS: 'extended' }, dataset: EXTENDED_DATASET });
      empty = await startTestServer({ env: { SIS_RESULTS: 'extended' } });
    });
    after(async () => {
      await server.close();
      await empty.close();
    });

    it("GetStudentsMarks: one subject's marks in import order, null fields left out", async () => {
      const { res, value } = await client.call(server.url, marksOp, { StudnetID: '1', SubjectID: 'math' });
      assert.equal(res.status, 200);
      assert.deepEqual(value, MATH_1);
    });

    it('GetStudentsMarks: every subject when SubjectID is empty (or, over SOAP, missing)', async () => {
      const all = [MATH_1[0], LIT_1, MATH_1[1]];
      assert.deepEqual((await client.call(server.url, marksOp, { StudnetID: '1', SubjectID: '' })).value, all);
      if (client.name.startsWith('soap'))
        assert.deepEqual((await client.call(server.url, marksOp, { StudnetID: '1', SubjectID: null })).value, all);
    });

    it('GetStudentsMarks: an empty list for an unknown student or subject', async () => {
      for (const args of [
        { StudnetID: '9', SubjectID: '' },
        { StudnetID: '1', SubjectID: 'MATH' },
      ]) {
        const { res, value } = await client.call(server.url, marksOp, args);
        assert.equal(res.status, 200);
        assert.deepEqual(value, []);
      }
      if (!client.name.startsWith('soap')) {
        const { res } = await client.call(server.url, marksOp, { StudnetID: '1', SubjectID: '' });
        assert.match(res.body.toString(), /^<\?xml version="1\.0" encoding="utf-8"\?>\r?\n<ArrayOfMark /);
      }
    });

    it('GetServerKeyAndSender: the stored settings; nil when there are none', async () => {
      const { res, value } = await client.call(server.url, pushOp, {});
      assert.equal(res.status, 200);
      assert.deepEqual(value, { ServerKey: 'AAAA:key "with" <chars> & é', SenderId: '123456789012' });
      if (!client.name.startsWith('soap')) assert.match(res.body.toString(), /\n<PushSettings /);
      assert.equal((await client.call(empty.url, pushOp, {})).value, null);
    });
  });
}

describe('the WSDL follows the mode', () => {
  const wsdl = async (server: TestServer, service: string): Promise<string> => {
    const res = await rawRequest(server.url, { method: 'GET', path: `/${service}.asmx?WSDL` });
    assert.equal(res.status, 200);
    return res.body.toString();
  };

  it('extended: ArrayOfMark and PushSettings with their string fields', async () => {
    const server = await startTestServer({ env: { SIS_RESULTS: 'extended' } });
    try {
      const marks = await wsdl(server, 'GetStudnetsMarks');
      assert.match(marks, /<s:complexType name="ArrayOfMark">/);
      assert.match(
        marks,
        /<s:element minOccurs="0" maxOccurs="unbounded" name="Mark" nillable="true" type="tns:Mark" \/>/,
      );
      for (const field of ['id_student', 'SubjectID', 'SubjectName', 'Mark', 'Term', 'MarkDate', 'Note']) {
        assert.match(marks, new RegExp(`<s:element minOccurs="0" maxOccurs="1" name="${field}" type="s:string" />`));
      }
      assert.match(
        marks,
        /<s:element name="ArrayOfMark" nillable="true" type="tns:ArrayOfMark" \/>/,
        'the GET/POST root',
      );
      const push = await wsdl(server, 'PushNotificationMobile');
      assert.match(push, /<s:complexType name="PushSettings">/);
      assert.match(push, /name="GetServerKeyAndSenderResult" type="tns:PushSettings"/);
      assert.match(push, /<s:element name="PushSettings" nillable="true" type="tns:PushSettings" \/>/);
    } finally {
      await server.close();
    }
  });

  it('documented, the default or named: the WSDL of the spec (as the fixtures), and stored marks are not answered', async () => {
    const plain = await startTestServer({ dataset: EXTENDED_DATASET });
    const explicit = await startTestServer({ env: { SIS_RESULTS: 'documented' } });
    try {
      for (const service of ['GetStudnetsMarks', 'PushNotificationMobile']) {
        const text = await wsdl(plain, service);
        assert.doesNotMatch(text, /ArrayOfMark|PushSettings/);
        const address = (server: TestServer, wsdl: string): string => wsdl.replaceAll(server.url, 'http://host');
        assert.equal(sha(address(plain, text)), sha(address(explicit, await wsdl(explicit, service))));
      }
      for (const client of bindingClients) {
        const { res, value } = await client.call(plain.url, op('documented', 'GetStudentsMarks'), {
          StudnetID: '1',
          SubjectID: 'math',
        });
        assert.equal(res.status, 200);
        assert.equal(value, undefined);
        if (client.name.startsWith('http')) assert.equal(res.body.length, 0);
        else assert.match(res.body.toString(), /<GetStudentsMarksResponse xmlns="http:\/\/tempuri\.org\/" \/>/);
      }
    } finally {
      await plain.close();
      await explicit.close();
    }
  });
});

describe('the start warns when extended results answer the server key to anyone', () => {
  const started = async (env: Record<string, string>): Promise<string[]> => {
    const lines: string[] = [];
    const server = await startTestServer({
      env: { LOG_LEVEL: 'warn', ...env },
      logDestination: new Writable({
        write(chunk: Buffer, _enc, cb) {
          lines.push(chunk.toString());
          cb();
        },
      }),
    });
    await server.close();
    return lines.filter((l) => l.includes('server key'));
  };
  const key = `sha256:${createHash('sha256').update('k').digest('hex')}`;

  it('without API keys or an allow-list covering PushNotificationMobile', async () => {
    assert.equal((await started({ SIS_RESULTS: 'extended' })).length, 1);
    assert.match(
      (await started({ SIS_RESULTS: 'extended' }))[0]!,
      /"level":40.*SIS_RESULTS=extended answers the push server key to anyone/,
    );
    assert.equal(
      (await started({ SIS_RESULTS: 'extended', SIS_API_KEYS: key, SIS_API_KEY_SERVICES: 'AuthCodeSending' })).length,
      1,
    );
  });

  it('not when a key or the allow-list protects it, nor in documented mode', async () => {
    assert.deepEqual(await started({ SIS_RESULTS: 'extended', SIS_API_KEYS: key }), []);
    assert.deepEqual(
      await started({
        SIS_RESULTS: 'extended',
        SIS_ALLOW_FROM: '127.0.0.1',
        SIS_ALLOW_FROM_SERVICES: 'PushNotificationMobile',
      }),
      [],
    );
    assert.deepEqual(await started({}), []);
  });
});

function sha(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
