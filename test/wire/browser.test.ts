/**
 * The help pages in a real browser: headless Chromium (Debian's, driven by playwright-core) follows
 * the operation link, fills the HTTP POST test form, invokes it and reads the answer in the window
 * the form opens. A screenshot of the help page is kept in test/artifacts/ for a human to look at.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { chromium } from 'playwright-core';
import type { Browser, BrowserContext, Page, Response } from 'playwright-core';
import { readTree } from '../../src/xml/xml-tree.js';
import { ACTIVE, dataset, SCHOOL, SPECIAL_ID, SPECIAL_ID_TOKEN } from '../clients/scenarios.js';
import { fixture, startTestServer } from '../helpers/test-server.js';
import type { TestServer } from '../helpers/test-server.js';

const CHROMIUM = '/usr/bin/chromium';
const MISSING = existsSync(CHROMIUM) ? null : `${CHROMIUM} not found: install chromium`;
const ARTIFACTS = fixture('artifacts');

/** Submits the page's test form and returns the window it opens (target=_blank) with the HTTP answer shown in it. */
async function invoke(
  context: BrowserContext,
  page: Page,
  operation: string,
): Promise<{ popup: Page; response: Response }> {
  const answered = context.waitForEvent('response', (r) => new URL(r.url()).pathname.endsWith(`/${operation}`));
  const opened = context.waitForEvent('page');
  await page.getByRole('button', { name: 'Invoke' }).click();
  const [popup, response] = await Promise.all([opened, answered]);
  await popup.waitForLoadState();
  return { popup, response };
}

describe('help pages in headless Chromium', () => {
  // Left unset when Chromium is missing: every test then skips before using them.
  let server: TestServer | undefined;
  let browser: Browser | undefined;
  let context: BrowserContext | undefined;

  before(async () => {
    if (MISSING !== null) return;
    server = await startTestServer({ dataset });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--no-first-run',
        '--disable-sync',
      ],
    });
    context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  it(
    'GetStudentSchool: the test form posts and the new window shows the students in order',
    { timeout: 60_000 },
    async (t) => {
      if (MISSING !== null) {
        t.skip(MISSING);
        return;
      }
      const started = Date.now();
      const page = await context!.newPage();
      await page.goto(`${server!.url}/NotificationNotes.asmx`);
      assert.equal(await page.title(), 'NotificationNotes Web Service');
      await page.getByRole('link', { name: 'GetStudentSchool' }).click();
      await page.waitForURL(/\?op=GetStudentSchool$/);
      await page.getByLabel('school_base_url:').fill(SCHOOL);
      // HTTP POST takes the character itself, not its code.
      await page.getByLabel('show_active:').fill('1');
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: join(ARTIFACTS, 'help-page.png'), fullPage: true });

      const { popup, response } = await invoke(context!, page, 'GetStudentSchool');
      assert.equal(response.request().method(), 'POST');
      assert.equal(response.status(), 200);
      assert.equal(response.headers()['content-type'], 'text/xml; charset=utf-8');
      const root = readTree(await response.text());
      assert.equal(root.local, 'ArrayOfStudentInfo');
      assert.deepEqual(
        root.children.map((s) => Object.fromEntries(s.children.map((f) => [f.local, f.text]))),
        ACTIVE,
      );
      // What the user sees: Chromium's XML view of the answer, names decoded, in order, inactive student absent.
      const shown = await popup.locator('body').innerText();
      const first = shown.indexOf("O'Brien & <Sons>");
      const second = shown.indexOf('Zoë Ångström');
      assert.ok(first >= 0 && second > first, `the answer window lists both students in order:\n${shown}`);
      assert.ok(!shown.includes('علي'), 'the inactive student is not listed');
      await popup.screenshot({ path: join(ARTIFACTS, 'help-page-answer.png'), fullPage: true });
      await popup.close();
      await page.close();
      t.diagnostic(`browser GetStudentSchool: ${((Date.now() - started) / 1000).toFixed(1)} s`);
    },
  );

  it('GetTokenDevice: the form sends XML specials and non-ASCII text intact', { timeout: 60_000 }, async (t) => {
    if (MISSING !== null) {
      t.skip(MISSING);
      return;
    }
    const page = await context!.newPage();
    await page.goto(`${server!.url}/PushNotificationMobile.asmx?op=GetTokenDevice`);
    await page.getByLabel('id:').fill(SPECIAL_ID);
    const { popup, response } = await invoke(context!, page, 'GetTokenDevice');
    assert.equal(response.status(), 200);
    const root = readTree(await response.text());
    assert.equal(root.local, 'string');
    assert.equal(root.text, SPECIAL_ID_TOKEN);
    assert.match(await popup.locator('body').innerText(), new RegExp(SPECIAL_ID_TOKEN));
    await popup.close();
    await page.close();
  });
});
