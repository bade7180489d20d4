/**
 * Issue 33 point 2: AuthCode's answer never tells whether a guessed code is the one a phone just
 * got. A phone at its hourly limit is asked for again and again with wrong codes, then with its
 * own last code: every answer is the same refusal (today's code answered the right one 200, a
 * repeat). Each refused guess costs: it counts against the guesser's address (the address limit
 * stops the run) and against the phone (its growing wait runs from the last refusal, so once the
 * hour has passed the phone still waits). No metric counts repeats. On SQLite, PostgreSQL and with
 * Redis.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { authCode, backends, SMS_DEFAULTS } from '../helpers/sms-calls.js';
import type { Answer } from '../helpers/sms-calls.js';
import { cleanupTargets } from '../helpers/store-targets.js';
import { startTestServer } from '../helpers/test-server.js';

after(() => cleanupTargets());

const PHONE = '+966551234999';
const RIGHT = '424242';
const MINUTE = 60_000;

for (const backend of backends) {
  describe(`guessing a phone's code on ${backend.name}`, { skip: backend.skip ?? false }, () => {
    it('answers the right code as every wrong one, and counts each refused guess against the address and the phone', async () => {
      const { db, env } = await backend.fresh();
      // The first minute of this clock hour: the guesses below stay within its counters.
      let at = Math.floor(Date.now() / 3_600_000) * 3_600_000 + MINUTE;
      const server = await startTestServer({
        env: { ...SMS_DEFAULTS, ...env, SIS_AUTH_CODES_PER_ADDRESS_HOUR: '40' },
        now: () => new Date(at),
      });
      try {
        // The parent's app asks its five codes of the hour; the last one is the code to guess.
        for (const code of ['111111', '222222', '333333', '444444', RIGHT])
          assert.equal((await authCode(server.url, PHONE, '10.1.1.1', code)).status, 200);
        // A guesser at the limit: 39 wrong codes a minute apart, then a wrong one and the right one at once.
        const guesses: Answer[] = [];
        for (let i = 0; i < 39; i++) {
          at += MINUTE;
          guesses.push(await authCode(server.url, PHONE, '203.0.113.66', String(500_000 + i)));
        }
        const wrong = await authCode(server.url, PHONE, '198.51.100.77', '999999');
        const right = await authCode(server.url, PHONE, '198.51.100.77', RIGHT);
        assert.deepEqual(right, wrong, 'the right code is answered as a wrong one');
        assert.equal(right.status, 500);
        assert.match(right.text, /^Too many codes for this phone: at most 5 an hour\. Try again in \d+ minutes\.$/);
        assert.ok(
          guesses.every((g) => g.status === 500 && g.text.startsWith('Too many codes for this phone')),
          JSON.stringify(guesses.find((g) => g.status !== 500)),
        );
        // The address paid for its 39 refused guesses and its fortieth: the next is refused for the address.
        assert.equal((await authCode(server.url, PHONE, '203.0.113.66', '777777')).status, 500);
        assert.match(
          (await authCode(server.url, PHONE, '203.0.113.66', RIGHT)).text,
          /^Too many codes asked from this address\./,
        );
        // An hour after the parent's codes, the phone still waits: the guesses grew its wait from the last one.
        at += 22 * MINUTE;
        const later = await authCode(server.url, PHONE, '192.0.2.5', '888888');
        const laterRight = await authCode(server.url, PHONE, '192.0.2.5', RIGHT);
        // (How long it says depends on how many refusals came before, never on the code.)
        for (const answer of [later, laterRight]) {
          assert.equal(answer.status, 500);
          assert.match(answer.text, /^Too many codes for this phone today: each next one waits longer\./);
        }
        // No metric counts repeats (it would tell a guesser which code was the phone's).
        const metrics = await (await fetch(`${server.url}/metrics`)).text();
        assert.doesNotMatch(metrics, /repeat/);
      } finally {
        await server.close();
      }
      assert.equal(Number((await db.sql('select count(*) as n from outbox'))[0]!.n), 5, "only the parent's codes");
    });
  });
}
