/**
 * Issue 33 point 7: the guard's defaults are right for a school of any country. With the defaults
 * and SIS_SMS_DEFAULT_REGION naming the school's country, a parents' evening of 300 parents on the
 * school's one address (behind its trusted proxy) all get their codes, in the United Kingdom,
 * Saudi Arabia, the United States and France alike (before, every school outside Saudi Arabia got
 * 200 codes a day for its own parents: 205 of 300 in the issue); a pumping run of 250 codes against
 * another country stops at that country's 200. Without a region, the start says in one line which
 * limit applies to whom.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, describe, it } from 'node:test';
import { parsePhoneNumberFromString } from 'libphonenumber-js/max';
import type { CountryCode } from 'libphonenumber-js/max';
import { authCode, backends, inParallel, midHour, refusals, SMS_DEFAULTS } from '../helpers/sms-calls.js';
import type { Answer } from '../helpers/sms-calls.js';
import { cleanupTargets } from '../helpers/store-targets.js';
import { startTestServer } from '../helpers/test-server.js';

after(() => cleanupTargets());

/** National numbers as a country's parents write them: a pattern of mobile-looking digits per country. */
const PATTERNS: Readonly<Record<string, (r: () => number) => string>> = {
  GB: (r) => `07${digits(r, 9)}`,
  SA: (r) => `05${digits(r, 8)}`,
  US: (r) => `${['201', '212', '305', '312', '415', '512', '617', '702'][r() % 8]}${2 + (r() % 8)}${digits(r, 6)}`,
  FR: (r) => `0${6 + (r() % 2)}${digits(r, 8)}`,
};

function digits(r: () => number, n: number): string {
  return Array.from({ length: n }, () => String(r() % 10)).join('');
}

/** `n` distinct valid mobiles of `country` (as libphonenumber reads them), in international form. */
function mobiles(country: string, n: number, seed: number): string[] {
  let s = seed;
  const r = (): number => (s = (Math.imul(s, 1103515245) + 12345) >>> 0) >>> 8;
  const out = new Set<string>();
  while (out.size < n) {
    const parsed = parsePhoneNumberFromString(PATTERNS[country]!(r), country as CountryCode);
    const type = parsed?.getType();
    if (
      parsed?.isValid() === true &&
      parsed.country === country &&
      (type === 'MOBILE' || type === 'FIXED_LINE_OR_MOBILE')
    )
      out.add(parsed.number);
  }
  return [...out];
}

/** Where each school's pumping run goes. */
const ELSEWHERE: Readonly<Record<string, string>> = { GB: 'US', SA: 'GB', US: 'FR', FR: 'SA' };
const sqlite = backends.find((b) => b.name === 'SQLite')!;

for (const region of ['GB', 'SA', 'US', 'FR']) {
  describe(`a school in ${region} with the defaults`, () => {
    it(`accepts 300 home parents on the school's address and stops a run against ${ELSEWHERE[region]} at 200`, async () => {
      const { env } = await sqlite.fresh();
      const server = await startTestServer({
        env: { ...SMS_DEFAULTS, ...env, SIS_SMS_DEFAULT_REGION: region },
        now: midHour(),
      });
      try {
        const parents: Answer[] = [];
        await inParallel(mobiles(region, 300, region.charCodeAt(0)), 4, async (phone) => {
          // As parents write them at home: the national form (spaces and dashes; AuthCode takes no brackets).
          const national = parsePhoneNumberFromString(phone)!.formatNational().replace(/[()]/g, '');
          parents.push(await authCode(server.url, national, '203.0.113.50'));
        });
        assert.deepEqual(
          parents.filter((a) => a.status !== 200),
          [],
          'every parent gets a code',
        );
        const pumped: Answer[] = [];
        await inParallel(mobiles(ELSEWHERE[region]!, 250, 7), 4, async (phone) => {
          pumped.push(await authCode(server.url, phone, `198.51.100.${pumped.length % 50}`));
        });
        assert.equal(pumped.filter((a) => a.status === 200).length, 200, 'the other country gets its 200');
        assert.deepEqual(Object.fromEntries(await refusals(server.url)), { 'country-daily': 50 });
      } finally {
        await server.close();
      }
    });
  });
}

describe('a school with no region', () => {
  it('says at start, in one line, that every country gets the low limit and no country the home one', async () => {
    const lines: string[] = [];
    const logDestination = new Writable({
      write(chunk: Buffer, _enc, cb) {
        lines.push(chunk.toString());
        cb();
      },
    });
    const server = await startTestServer({
      env: { ...SMS_DEFAULTS, SIS_SMS_DEFAULT_REGION: '', LOG_LEVEL: 'info' },
      logDestination,
    });
    await server.close();
    const said = lines.filter((l) => l.includes('SMS country limits'));
    assert.equal(said.length, 1, lines.join(''));
    assert.match(
      said[0]!,
      /codes a day: every other country 200; SIS_SMS_DEFAULT_REGION is unset, so no country gets the home limit \(20000\)/,
    );
  });
});
