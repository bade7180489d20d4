/**
 * The Grafana dashboard (deploy/grafana/sis-dashboard.json): it type-checks against Grafana's
 * published dashboard schema (@grafana/schema's Dashboard, with TypeScript's excess-property checks,
 * so a misspelt field fails), every PromQL expression parses (promtool), and every metric it
 * names is exported by a running service.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import ts from 'typescript';
import { findExecutable, run } from '../clients/client-scenario.js';
import { repoRoot, startTestServer } from '../helpers/test-server.js';

const FILE = join(repoRoot, 'deploy', 'grafana', 'sis-dashboard.json');
const TEXT = readFileSync(FILE, 'utf8');
const PROMTOOL = findExecutable('promtool');
const dir = mkdtempSync(join(tmpdir(), 'sis-dashboard-'));
after(() => rmSync(dir, { recursive: true, force: true }));

interface Target {
  readonly expr: string;
}
interface Panel {
  readonly title: string;
  readonly targets?: readonly Target[];
}

function expressions(): { title: string; expr: string }[] {
  const dashboard = JSON.parse(TEXT) as { panels: Panel[] };
  return dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ title: p.title, expr: t.expr })));
}

/** Grafana's variables replaced by what they stand for, so that promtool reads plain PromQL. */
function plain(expr: string): string {
  return expr.replaceAll('$__rate_interval', '5m').replaceAll('$instance', '.*');
}

const KEYWORDS = new Set([
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'offset',
  'bool',
  'and',
  'or',
  'unless',
]);

/** The metric names an expression selects: identifiers outside strings, matchers and grouping lists, not called. */
function metricNames(expr: string): string[] {
  const bare = plain(expr)
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, '')
    .replace(/\[[^\]]*\]/g, '')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, '');
  return [...bare.matchAll(/\b([a-zA-Z_:][a-zA-Z0-9_:]*)\b(?!\s*\()/g)]
    .map((m) => m[1]!)
    .filter((name) => !KEYWORDS.has(name) && !/^\d/.test(name));
}

describe('Grafana dashboard', () => {
  it('type-checks against @grafana/schema’s Dashboard', () => {
    const path = join(repoRoot, 'test', 'deploy', 'dashboard-typecheck.ts');
    const source = `import type { Dashboard } from '@grafana/schema';\nexport const dashboard = ${TEXT.trim()} satisfies Dashboard;\n`;
    const options: ts.CompilerOptions = {
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      target: ts.ScriptTarget.ES2022,
      types: [],
    };
    const host = ts.createCompilerHost(options);
    const getSourceFile = host.getSourceFile.bind(host);
    host.getSourceFile = (name, language, ...rest) =>
      name === path ? ts.createSourceFile(name, source, language) : getSourceFile(name, language, ...rest);
    const fileExists = host.fileExists.bind(host);
    host.fileExists = (name) => name === path || fileExists(name);
    const program = ts.createProgram([path], options, host);
    const problems = ts
      .getPreEmitDiagnostics(program, program.getSourceFile(path))
      .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    assert.deepEqual(problems, []);
  });

  it(
    'has PromQL that promtool parses',
    { skip: PROMTOOL === null ? 'promtool not found: install Debian’s prometheus package' : false },
    async () => {
      const all = expressions();
      assert.ok(all.length >= 20, `${all.length} expressions`);
      // promtool parses expressions as recording rules: one rule per expression.
      const rules = all.map(
        (e, i) => `      - record: dashboard:expression_${i}\n        expr: ${JSON.stringify(plain(e.expr))}`,
      );
      const file = join(dir, 'dashboard-expressions.yml');
      writeFileSync(file, `groups:\n  - name: dashboard\n    rules:\n${rules.join('\n')}\n`);
      const { stdout } = await run(PROMTOOL!, ['check', 'rules', file]);
      assert.match(stdout, new RegExp(`SUCCESS: ${all.length} rules found`));
    },
  );

  it('names only metrics a running service exports', async () => {
    const server = await startTestServer({
      env: { SIS_SHADOW: 'compare', SIS_LEGACY_URL: 'http://127.0.0.1:9', SIS_SHADOW_TIMEOUT_MS: '500' },
    });
    try {
      const body = await (await fetch(`${server.url}/metrics`)).text();
      const exported = new Set(
        body.split('\n').flatMap((line) => {
          const typed = /^# TYPE (\S+) (\S+)/.exec(line);
          if (typed === null) return /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line)?.[0] ?? [];
          const [, name, type] = typed;
          return type === 'histogram' ? [name!, `${name}_bucket`, `${name}_sum`, `${name}_count`] : [name!];
        }),
      );
      const names = new Set(expressions().flatMap((e) => metricNames(e.expr)));
      assert.ok(names.size >= 20, [...names].join(' '));
      assert.deepEqual(
        [...names].filter((n) => !exported.has(n)),
        [],
        'metrics the dashboard names that the service does not export',
      );
    } finally {
      await server.close();
    }
  });
});
