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
    const text = readFileSync(RULES, 'utf8');
    const tests = readFileSync(join(repoRoot, 'test', 'deploy', 'sis-rules.test.yml'), 'utf8');
    const operations = readFileSync(join(repoRoot, 'docs', 'operations.md'), 'utf8');
    const anchors = new Set(
      [...operations.matchAll(/^#+ (.+)$/gm)].map((m) =>
        m[1]!
          .toLowerCase()
          .replace(/[^a-z0-9 -]/g, '')
          .replace(/ /g, '-'),
      ),
    );
    const alerts = text.split(/^ {6}- alert: /m).slice(1);
    assert.ok(alerts.length >= 10, `${alerts.length} alerts`);
    for (const alert of alerts) {
      const name = alert.slice(0, alert.indexOf('\n'));
      assert.match(alert, /\n {10}summary: '.+'/, `${name}: summary`);
      assert.match(alert, /\n {10}description: '.+'/, `${name}: description`);
      const runbook = /runbook_url: 'docs\/operations\.md#([a-z0-9-]+)'/.exec(alert)?.[1];
      assert.equal(runbook, name.toLowerCase(), `${name}: runbook_url names its own section`);
      assert.ok(anchors.has(runbook), `${name}: docs/operations.md has no section "${name}"`);
      assert.match(
        tests,
        new RegExp(`alertname: ${name}\\n\\s+exp_alerts:\\n\\s+- exp_labels`),
        `${name} is tested firing`,
      );
      assert.match(tests, new RegExp(`alertname: ${name}, exp_alerts: \\[\\] \\}`), `${name} is tested quiet`);
    }
  });
});
