/**
 * What the repository's balancer (deploy/haproxy/haproxy.cfg) logs, and the report brake behind
 * it (issue 41 point 2): HAProxy runs that configuration in front of a real instance and logs to
 * stdout, read here. A provider's report carries its token in the query (Unifonic's ?token=,
 * Kannel's t=); the log has each request's path and never its query, so no token. The instance
 * believes the balancer's X-Forwarded-For, so the brake counts each client's own address: one
 * that keeps guessing is braked, another is not.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { BALANCER_CONFIG, HAPROXY_SKIP, removeBalancerFiles, requestFrom, startBalancer } from '../helpers/balancer.js';
import { closedPort, eventually } from '../helpers/sms-gateway.js';
import { startTestServer } from '../helpers/test-server.js';

after(() => removeBalancerFiles());

const PATH = '/sms/reports-lb';
const TOKEN = 'unifonic-token-never-in-any-log-0123456789';
const KANNEL_T = 'kannel-t-never-in-any-log-0123456789ab';

describe('load balancer (HAProxy) log', () => {
  it('logs the request line without its query: provider tokens never, paths always', () => {
    assert.doesNotMatch(BALANCER_CONFIG, /^\s*option httplog/m, 'httplog would log the request line, query and all');
    assert.match(BALANCER_CONFIG, /^\s*log-format .*%HPO/m);
  });

  it(
    'writes report paths without their tokens, and brakes a guessing client by its own address',
    { skip: HAPROXY_SKIP, timeout: 90_000 },
    async () => {
      const server = await startTestServer({
        env: {
          SIS_TRUSTED_PROXIES: '127.0.0.1',
          SIS_SMS_GATEWAY: 'kannel,unifonic',
          SIS_SMS_KANNEL_URL: `http://127.0.0.1:${await closedPort()}/cgi-bin/sendsms`,
          SIS_SMS_KANNEL_USER: 'sis',
          SIS_SMS_KANNEL_PASSWORD: 'kannel-password-of-at-least-32-bytes',
          SIS_SMS_UNIFONIC_APP_SID: 'app-sid',
          SIS_SMS_UNIFONIC_API_URL: `http://127.0.0.1:${await closedPort()}`,
          SIS_SMS_UNIFONIC_WEBHOOK_TOKEN: TOKEN,
          SIS_SMS_RECEIPT_PATH: PATH,
          SIS_SMS_CALLBACK_URL: `https://sis.school.example${PATH}`,
        },
      });
      const lb = await startBalancer({ 'sis-1': new URL(server.url).host, 'sis-2': '127.0.0.1:1' });
      try {
        const unifonic = `${lb.url}${PATH}/unifonic?token=`;
        // The right token without a report: 400; a guess: 401.
        assert.equal((await requestFrom('127.0.0.21', `${unifonic}${TOKEN}`)).status, 400);
        assert.equal(
          (await requestFrom('127.0.0.21', `${lb.url}${PATH}/kannel?id=1&t=${KANNEL_T}&type=1`)).status,
          401,
        );
        // (The brake counts per gateway: Kannel's failure is not one of Unifonic's ten.)
        for (let i = 1; i < 10; i++)
          assert.equal((await requestFrom('127.0.0.21', `${unifonic}guess-${i}`)).status, 401);
        // Its tenth failed report brakes the address; another client's reports are still read.
        assert.equal((await requestFrom('127.0.0.21', `${unifonic}guess-10`)).status, 401);
        assert.equal(
          (await requestFrom('127.0.0.21', `${unifonic}${TOKEN}`)).status,
          429,
          'braked, right token or not',
        );
        assert.equal((await requestFrom('127.0.0.22', `${unifonic}${TOKEN}`)).status, 400, 'another client is read');

        const lines = await eventually(
          () => (lb.log.filter((l) => l.includes(PATH)).length >= 13 ? lb.log : undefined),
          15_000,
          "the balancer's log lines",
        );
        const reports = lines.filter((l) => l.includes(PATH));
        assert.ok(
          reports.some((l) => l.includes(`"GET ${PATH}/unifonic HTTP/1.1"`)),
          reports.join('\n'),
        );
        assert.ok(
          reports.some((l) => l.includes(`"GET ${PATH}/kannel HTTP/1.1"`)),
          reports.join('\n'),
        );
        assert.ok(
          reports.some((l) => /^127\.0\.0\.21:\d+ .* 429 /.test(l)),
          'the client and the status are logged',
        );
        for (const l of lines) {
          assert.ok(!l.includes(TOKEN) && !l.includes(KANNEL_T) && !l.includes('guess-'), `a token logged: ${l}`);
          assert.ok(!l.includes('?'), `a query logged: ${l}`);
        }
      } finally {
        lb.close();
        await server.close();
      }
    },
  );
});
