import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import {
  assertAuthCodes,
  assertCalls,
  assertReport,
  buildFolder,
  clientSource,
  findExecutable,
  parseReport,
  run,
  seconds,
  SERVICE_FILES,
  useScenarioServer,
} from './client-scenario.js';
import { ALL_OPERATIONS, PHONE } from './scenarios.js';

const IMPORT_DIR = '/usr/share/gsoap/import';

/** Why the client cannot be built here, or null when it can. */
function missing(): string | null {
  for (const tool of ['wsdl2h', 'soapcpp2', 'g++']) {
    if (findExecutable(tool) === null) return `${tool} not found: install gsoap, libgsoap-dev and g++`;
  }
  if (!existsSync(join(IMPORT_DIR, 'soap12.h')) || !existsSync('/usr/include/stdsoap2.h')) {
    return `gSOAP headers not found (${IMPORT_DIR}, /usr/include/stdsoap2.h): install gsoap and libgsoap-dev`;
  }
  return null;
}
const MISSING = missing();

describe('gSOAP (wsdl2h + soapcpp2 + g++) from the live WSDL', () => {
  const ctx = useScenarioServer();

  it(
    'builds a C++ client and calls every operation over SOAP 1.1 and SOAP 1.2',
    { timeout: 300_000, skip: MISSING ?? false },
    async (t) => {
      const build = buildFolder('gsoap');
      try {
        const dir = build.dir;
        // One header for all four services; -N gives each binding its own proxy and default endpoint.
        const wsdl2h = await run(
          'wsdl2h',
          ['-Nsis', '-o', 'sis.h', ...SERVICE_FILES.map((s) => `${ctx.url}/${s}.asmx?WSDL`)],
          { cwd: dir },
        );
        const soapcpp2 = await run('soapcpp2', ['-j', '-C', '-x', `-I${IMPORT_DIR}`, 'sis.h'], { cwd: dir });
        // Each unit compiled on its own, in parallel: the serializers are the slow part.
        const units = [...readdirSync(dir).filter((f) => /^soap.*\.cpp$/.test(f)), clientSource('gsoap', 'client.cpp')];
        const compileStart = Date.now();
        await Promise.all(
          units.map((unit, i) =>
            run('g++', ['-c', '-O0', `-I${dir}`, unit, '-o', `unit${i}.o`], { cwd: dir, timeoutMs: 240_000 }),
          ),
        );
        await run('g++', ['-o', 'client', ...units.map((_, i) => `unit${i}.o`), '-lgsoap++'], { cwd: dir });
        const compileMs = Date.now() - compileStart;
        const client = await run(join(dir, 'client'), ['gsoap', PHONE], { cwd: dir });
        t.diagnostic(
          `gSOAP: wsdl2h ${seconds(wsdl2h.ms)}, soapcpp2 ${seconds(soapcpp2.ms)}, g++ ${seconds(compileMs)}, client ${seconds(client.ms)}`,
        );
        assertReport(parseReport(client.stdout), ['soap11', 'soap12'], ['soap11', 'soap12']);
        assertCalls(ctx.proxy, { soap11: ALL_OPERATIONS, soap12: ALL_OPERATIONS });
        assertAuthCodes(ctx.server, 'gsoap', ['soap11', 'soap12']);
      } finally {
        build.remove();
      }
    },
  );
});
