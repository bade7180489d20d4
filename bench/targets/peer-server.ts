/**
 * The peer: node-soap (npm `soap`) serving our WSDL documents, with our store behind it so both
 * read the same rows the same way and the comparison is of the SOAP stacks. node-soap answers
 * one envelope version per listener, so SOAP 1.2 gets a second listener under /soap12/.
 *
 * Usage: PORT=N SIS_DATABASE_URL=sqlite:FILE node dist/bench/targets/peer-server.js WSDL_DIR SERVICE...
 * (WSDL_DIR holds SERVICE.wsdl as fetched from our service.)
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { listen } from 'soap';
import type { IServicePort, IServices } from 'soap';
import { openStore } from '../../src/store/open/open-store.js';

const [wsdlDir, ...serviceNames] = process.argv.slice(2);
const databaseUrl = process.env['SIS_DATABASE_URL'];
if (wsdlDir === undefined || serviceNames.length === 0 || databaseUrl === undefined) {
  throw new Error('usage: SIS_DATABASE_URL=... peer-server WSDL_DIR SERVICE...');
}
const store = await openStore(databaseUrl);

type Args = Readonly<Record<string, unknown>>;
const str = (v: unknown): string | null => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : null);

/** The operations as a node-soap user writes them: objects in, objects out. */
const port: IServicePort = {
  async GetTokenDevice(args: Args) {
    const id = str(args['id']);
    return { GetTokenDeviceResult: id === null ? null : await store.deviceToken(id) };
  },
  async GetStudentSchool(args: Args) {
    const school = str(args['school_base_url']);
    // A .NET char travels as its UTF-16 code (49 is '1').
    const code = Number(str(args['show_active']) ?? 0);
    const rows = school === null ? [] : await store.studentsOfSchool(school, String.fromCharCode(code));
    const StudentInfo = rows.map((r) => {
      const item: Record<string, string> = {};
      for (const f of ['id_student', 'fullName', 'id_device', 'ShowActive'] as const) {
        const v = r[f];
        if (v !== null) item[f] = v;
      }
      return item;
    });
    return { GetStudentSchoolResult: { StudentInfo } };
  },
  async AuthCode(args: Args) {
    // The same write as ours (code, hourly count, outbox message in one transaction), unlimited as ours runs in the benchmark.
    const code = str(args['code']) ?? '';
    await store.acceptAuthCode({
      code,
      phone: str(args['phone']) ?? '',
      at: new Date(),
      message: `Your verification code is ${code}`,
      maxPerHour: 0,
    });
    return {};
  },
  async GetServerKeyAndSender() {
    return {};
  },
  async GetStudentsMarks() {
    return {};
  },
};

const server = createServer();
const ready: Promise<void>[] = [];
for (const name of serviceNames) {
  const xml = readFileSync(join(wsdlDir, `${name}.wsdl`), 'utf8');
  const services: IServices = { [name]: { [`${name}Soap`]: port, [`${name}Soap12`]: port } };
  for (const soap12 of [false, true]) {
    ready.push(
      new Promise((resolve, reject) => {
        listen(server, {
          path: soap12 ? `/soap12/${name}.asmx` : `/${name}.asmx`,
          services,
          xml,
          // Content-Length like ASMX and the others, not chunked.
          enableChunkedEncoding: false,
          forceSoap12Headers: soap12,
          callback: (err: unknown) => (err ? reject(err instanceof Error ? err : new Error(String(err))) : resolve()),
        });
      }),
    );
  }
}
await Promise.all(ready);
server.listen(Number(process.env['PORT'] ?? 0), '127.0.0.1');
process.once('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
  void store.close();
});
