/**
 * The alert and recording rules (deploy/prometheus/): promtool accepts them and the scrape
 * configuration beside them, its unit tests (sis-rules.test.yml: series in, alerts out, quiet on a
 * normal day) pass, and every alert has a summary, a description and a runbook that is a section
 * of docs/operations.md.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import { findExecutable, run } from '../clients/client-scenario.js';
import { repoRoot } from '../helpers/test-server.js';

const PROMTOOL = findExecutable('promtool');
const SKIP =
  PROMTOOL === null ? 'promtool not found: install Debian’s prometheus package (no server is started)' : false;
const RULES = join(repoRoot, 'deploy', 'prometheus', 'sis-rules.yml');

describe('alert rules', () => {
  it('pass promtool check rules and check config', { skip: SKIP }, async () => {
    const rules = await run(PROMTOOL!, ['check', 'rules', RULES]);
    assert.match(rules.stdout, /SUCCESS: \d+ rules found/);
    await run(PROMTOOL!, [
      'check',
      'config',
      '--syntax-only',
      join(repoRoot, 'deploy', 'prometheus', 'prometheus.yml'),
    ]);
  });

  it('raise each alert on its series and none on a normal day (promtool test rules)', { skip: SKIP }, async () => {
    const result = await run(PROMTOOL!, ['test', 'rules', join(repoRoot, 'test', 'deploy', 'sis-rules.test.yml')]);
    assert.match(result.stdout, /SUCCESS/);
  });

  it('give every alert a summary, a description and a runbook section of docs/operations.md', () => {
    const rules = parse(readFileSync(RULES, 'utf8')) as {
      groups: { rules: { alert?: string; annotations?: Record<string, string> }[] }[];
    };
    const unitTests = parse(readFileSync(join(repoRoot, 'test', 'deploy', 'sis-rules.test.yml'), 'utf8')) as {
      tests: { alert_rule_test?: { alertname: string; exp_alerts: unknown[] }[] }[];
    };
    const cases = unitTests.tests.flatMap((t) => t.alert_rule_test ?? []);
    const operations = readFileSync(join(repoRoot, 'docs', 'operations.md'), 'utf8');
    const anchors = new Set(
      [...operations.matchAll(/^#+ (.+)$/gm)].map((m) =>
        m[1]!
          .toLowerCase()
          .replace(/[^a-z0-9 -]/g, '')
          .replace(/ /g, '-'),
      ),
    );
    const alerts = rules.groups.flatMap((g) => g.rules).filter((r) => r.alert !== undefined);
    assert.ok(alerts.length >= 10, `${alerts.length} alerts`);
    for (const { alert: name, annotations } of alerts) {
      assert.ok((annotations?.['summary'] ?? '') !== '', `${name}: summary`);
      assert.ok((annotations?.['description'] ?? '') !== '', `${name}: description`);
      const runbook = /^docs\/operations\.md#([a-z0-9-]+)$/.exec(annotations?.['runbook_url'] ?? '')?.[1];
      assert.equal(runbook, name!.toLowerCase(), `${name}: runbook_url names its own section`);
      assert.ok(anchors.has(runbook), `${name}: docs/operations.md has no section "${name}"`);
      const mine = cases.filter((c) => c.alertname === name);
      assert.ok(
        mine.some((c) => c.exp_alerts.length > 0),
        `${name} is tested firing`,
      );
      assert.ok(
        mine.some((c) => c.exp_alerts.length === 0),
        `${name} is tested quiet`,
      );
    }
  });
});
