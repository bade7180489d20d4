/**
 * `sis shadow report --html FILE` in a real browser (headless Chromium, driven by playwright-core):
 * the page loads nothing from outside, logs no error, draws the results per operation per hour,
 * shows each kind with both answers and the differing values marked, the accepted differences with
 * their notes and hits, and AuthCode's phone masked. A screenshot is kept in test/artifacts/.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { goldenCases, startLegacyReplay } from '../helpers/legacy-replay.js';
import type { GoldenAnswer } from '../helpers/legacy-replay.js';
import { finish, sendCase, startShadowed, shadowCli } from '../helpers/shadow-run.js';
import { cleanupTargets, storeTargets } from '../helpers/store-targets.js';
import { fixture } from '../helpers/test-server.js';

const CHROMIUM = '/usr/bin/chromium';
const MISSING = existsSync(CHROMIUM) ? null : `${CHROMIUM} not found: install chromium`;
const dir = mkdtempSync(join(tmpdir(), 'sis-report-html-'));

after(async () => {
  await cleanupTargets();
  rmSync(dir, { recursive: true, force: true });
});

function sis(args: string[], databaseUrl: string): Promise<{ code: number; out: string; err: string }> {
  return shadowCli(args, { SIS_DATABASE_URL: databaseUrl });
}

const edit =
  (from: string, to: string) =>
  (a: GoldenAnswer): GoldenAnswer => ({ ...a, body: Buffer.from(a.body.toString('utf8').replace(from, to)) });

const ALTER = new Map([
  ['soap11_GetTokenDevice_known', edit('tok-AAA-111', 'tok-AAA-999')],
  ['get_GetStudentSchool_several', edit('Zoë Ångström', 'Zoe Angstrom')],
  ['get_AuthCode', (a: GoldenAnswer): GoldenAnswer => ({ ...a, status: 500 })],
]);

for (const target of storeTargets) {
  describe(`the HTML report in headless Chromium, on ${target.name}`, { skip: target.skip ?? undefined }, () => {
    it(
      'renders on its own, marks the differences, lists the rules, masks the phone',
      { timeout: 120_000 },
      async (t) => {
        if (MISSING !== null) return t.skip(MISSING);
        const legacy = await startLegacyReplay({ alter: ALTER });
        const db = await target.fresh();
        try {
          // Legacy mode: AuthCode reaches the legacy (refused there), so its difference is kept, masked.
          const server = await startShadowed({ SIS_SHADOW: 'legacy', SIS_LEGACY_URL: legacy.url }, db.url);
          for (const name of [...ALTER.keys(), 'get_GetTokenDevice_known'])
            await sendCase(
              server.url,
              goldenCases().find((c) => c.name === name)!,
            );
          const report = await finish(server, db.url);
          const names = report.differences.find((d) => d.operation === 'GetStudentSchool')!;
          const accepted = await sis(['accept', '--kind', names.kind, '--note', 'names <are> trimmed'], db.url);
          assert.equal(accepted.code, 0, accepted.err);

          const file = join(dir, `report-${target.name}.html`);
          const written = await sis(['report', '--html', file], db.url);
          assert.equal(written.code, 0, written.err);
          const html = readFileSync(file, 'utf8');
          assert.doesNotMatch(html, /15551234567/, 'the phone is masked');
          assert.doesNotMatch(html, /(?:src|href)=["']?(?:https?:)?\/\//i, 'no external resource');

          const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu'] });
          try {
            const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
            const errors: string[] = [];
            const requested: string[] = [];
            page.on('console', (m) => {
              if (m.type() === 'error') errors.push(m.text());
            });
            page.on('pageerror', (e) => errors.push(e.message));
            page.on('request', (r) => requested.push(r.url()));
            await page.goto(pathToFileURL(file).href);
            assert.deepEqual(errors, []);
            assert.deepEqual(requested, [pathToFileURL(file).href], 'the page alone is loaded');
            assert.equal(await page.locator('h1').innerText(), 'Comparisons with the legacy service');
            assert.ok((await page.locator('#hourly svg rect').count()) >= 3, 'bars per operation and result');
            const kinds = page.locator('#differences article.kind');
            assert.equal(await kinds.count(), 2, 'the token and AuthCode; the names are accepted');
            const marks = await page.locator('#differences mark').allInnerTexts();
            assert.ok(marks.includes('tok-AAA-999') && marks.includes('tok-AAA-111'), marks.join(' | '));
            const markedInBody = await page.locator('#differences pre mark').allInnerTexts();
            assert.ok(markedInBody.includes('tok-AAA-999'), 'the differing value is marked in the answer itself');
            const background = await page
              .locator('#differences pre mark')
              .first()
              .evaluate((el) => getComputedStyle(el).backgroundColor);
            assert.equal(background, 'rgb(255, 235, 59)', 'highlighted');
            const rules = await page.locator('#rules').innerText();
            assert.match(rules, /names <are> trimmed/);
            assert.match(rules, new RegExp(names.kind));
            const totals = await page.locator('#totals').innerText();
            assert.match(totals, /accepted\s+1/, 'the accepted kind counted accepted');
            mkdirSync(fixture('artifacts'), { recursive: true });
            await page.screenshot({
              path: join(fixture('artifacts'), `shadow-report-${target.name}.png`),
              fullPage: true,
            });
          } finally {
            await browser.close();
          }
        } finally {
          await legacy.close();
        }
      },
    );
  });
}
