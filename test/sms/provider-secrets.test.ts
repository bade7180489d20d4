/**
 * Every secret that authenticates a provider's report is at least 32 bytes, or the service does
 * not start (issue 41 point 2): one line each, naming the setting, never echoing the secret.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { configProblems } from '../helpers/config-problems.js';

const PATH = '/sms/reports-41';
const PUBLIC = `https://sis.school.example${PATH}`;

describe('provider secrets', () => {
  const problems = configProblems;
  const gateways = {
    SIS_SMS_GATEWAY: 'kannel,twilio,vonage,unifonic',
    SIS_SMS_KANNEL_URL: 'http://kannel:13013/cgi-bin/sendsms',
    SIS_SMS_KANNEL_USER: 'sis',
    SIS_SMS_TWILIO_ACCOUNT_SID: 'AC0123456789abcdef0123456789abcdef',
    SIS_SMS_VONAGE_API_KEY: 'k',
    SIS_SMS_VONAGE_API_SECRET: 's',
    SIS_SMS_UNIFONIC_APP_SID: 'a',
    SIS_SMS_RECEIPT_PATH: PATH,
    SIS_SMS_CALLBACK_URL: PUBLIC,
  };

  it('refuses at start each secret that authenticates a report and is shorter than 32 bytes, one line naming it', () => {
    const short = problems({
      ...gateways,
      SIS_SMS_KANNEL_PASSWORD: 'p'.repeat(31),
      SIS_SMS_TWILIO_AUTH_TOKEN: 't'.repeat(16),
      SIS_SMS_VONAGE_SIGNATURE_SECRET: 'v',
      SIS_SMS_UNIFONIC_WEBHOOK_TOKEN: 'x',
    });
    assert.deepEqual(
      short.map((p) => p.split(':', 1)[0]),
      [
        'SIS_SMS_KANNEL_PASSWORD',
        'SIS_SMS_TWILIO_AUTH_TOKEN',
        'SIS_SMS_VONAGE_SIGNATURE_SECRET',
        'SIS_SMS_UNIFONIC_WEBHOOK_TOKEN',
      ],
      short.join('\n'),
    );
    assert.ok(
      short.includes(
        'SIS_SMS_UNIFONIC_WEBHOOK_TOKEN: 1 bytes, expected at least 32 (a random key, such as the output of openssl rand -hex 32)',
      ),
      short.join('\n'),
    );
    for (const p of short) assert.ok(!/p{31}|t{16}/.test(p), `no secret echoed: ${p}`);
    // 32 bytes each (Twilio's Auth Token is 32 characters by nature): the service starts.
    assert.deepEqual(
      problems({
        ...gateways,
        SIS_SMS_KANNEL_PASSWORD: 'kannel-password-of-at-least-32-bytes',
        SIS_SMS_TWILIO_AUTH_TOKEN: '0123456789abcdef0123456789abcdef',
        SIS_SMS_VONAGE_SIGNATURE_SECRET: 'vonage-signature-secret-of-32-bytes',
        SIS_SMS_UNIFONIC_WEBHOOK_TOKEN: 'unifonic-webhook-token-of-32-bytes',
      }),
      [],
    );
    // Without reports asked for, the Kannel password and the Twilio token key none: their length is the provider's business.
    const noReports: Record<string, string> = { ...gateways };
    delete noReports['SIS_SMS_CALLBACK_URL'];
    assert.deepEqual(problems({ ...noReports, SIS_SMS_KANNEL_PASSWORD: 'p', SIS_SMS_TWILIO_AUTH_TOKEN: 't' }), []);
  });
});
