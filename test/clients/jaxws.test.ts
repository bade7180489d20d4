import { existsSync, mkdirSync, readdirSync } from 'node:fs';
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

/** Debian's JAX-WS runtime; its manifest brings in JAXB, SAAJ and the rest. */
const JAXWS_RT = '/usr/share/java/jaxws-rt.jar';

/** Why the client cannot be built here, or null when it can. */
function missing(): string | null {
  if (findExecutable('wsimport') === null) return 'wsimport not found: install jaxws and default-jdk-headless';
  for (const tool of ['javac', 'java']) {
    if (findExecutable(tool) === null) return `${tool} not found: install default-jdk-headless`;
  }
  if (!existsSync(JAXWS_RT)) return `${JAXWS_RT} not found: install jaxws`;
  return null;
}
const MISSING = missing();

function javaFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? javaFiles(join(dir, e.name)) : e.name.endsWith('.java') ? [join(dir, e.name)] : [],
  );
}

describe('JAX-WS (wsimport + javac) from the live WSDL', () => {
  const ctx = useScenarioServer();

  it(
    'builds a Java client and calls every operation over the SOAP 1.1 and SOAP 1.2 ports',
    { timeout: 300_000, skip: MISSING ?? false },
    async (t) => {
      const build = buildFolder('jaxws');
      try {
        const src = join(build.dir, 'src');
        const classes = join(build.dir, 'classes');
        mkdirSync(src);
        mkdirSync(classes);
        // One package per service: all four share the tempuri namespace, so their ObjectFactory and
        // package-info would otherwise overwrite each other.
        const wsimportStart = Date.now();
        await Promise.all(
          SERVICE_FILES.map((s) =>
            run(
              'wsimport',
              [
                '-extension',
                '-keep',
                '-Xnocompile',
                '-s',
                src,
                '-d',
                classes,
                '-p',
                `sis.${s.toLowerCase()}`,
                `${ctx.url}/${s}.asmx?WSDL`,
              ],
              {
                cwd: build.dir,
                timeoutMs: 180_000,
              },
            ),
          ),
        );
        const wsimportMs = Date.now() - wsimportStart;
        const javac = await run(
          'javac',
          [
            '-nowarn',
            '-encoding',
            'UTF-8',
            '-cp',
            JAXWS_RT,
            '-d',
            classes,
            ...javaFiles(src),
            clientSource('jaxws', 'Client.java'),
          ],
          { cwd: build.dir, timeoutMs: 180_000 },
        );
        const client = await run('java', ['-cp', `${classes}:${JAXWS_RT}`, 'Client', 'jaxws', PHONE], {
          cwd: build.dir,
          timeoutMs: 120_000,
        });
        t.diagnostic(
          `JAX-WS: wsimport ${seconds(wsimportMs)}, javac ${seconds(javac.ms)}, client ${seconds(client.ms)}`,
        );
        assertReport(parseReport(client.stdout), ['soap11', 'soap12'], ['soap11', 'soap12']);
        assertCalls(ctx.proxy, { soap11: ALL_OPERATIONS, soap12: ALL_OPERATIONS });
        assertAuthCodes(ctx.server, 'jaxws', ['soap11', 'soap12']);
      } finally {
        build.remove();
      }
    },
  );
});
