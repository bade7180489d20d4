/**
 * The SMPP gateway (issue 36 point 3) against an SMSC started here: node-smpp's server side (the
 * `smpp` package; no SMSC simulator is packaged for Debian or npm apart from it), acting as a
 * carrier would: it checks the bind's credentials, answers each submit_sm with a message id after
 * a pause, sends a delivery receipt as deliver_sm, and drops the bind once. The service's codes
 * arrive (GSM 7-bit as data_coding 0, Arabic as UCS-2, data_coding 8), never more than the window
 * at once; the bind is made again after the drop; receipts mark rows delivered or undelivered.
 */
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, describe, it } from 'node:test';
import { createServer } from 'smpp';
import type { Pdu, Session } from 'smpp';
import { smppGateway } from '../../src/outbox/gateways/smpp.js';
import { smsSize } from '../../src/sms/sms-segments.js';
import { authCode, SMS_DEFAULTS } from '../helpers/sms-calls.js';
import { eventually } from '../helpers/sms-gateway.js';
import { cleanupTargets } from '../helpers/store-targets.js';
import { startTestServer } from '../helpers/test-server.js';

after(() => cleanupTargets());

interface Submitted {
  readonly to: string;
  readonly from: string;
  readonly text: string;
  readonly dataCoding: number;
  readonly payload: boolean;
}

/** An SMSC: binds with sis/secret only, answers submit_sm after `holdMs`, reports each message. */
async function startSmsc(holdMs: number) {
  const submitted: Submitted[] = [];
  let binds = 0;
  let outstanding = 0;
  let mostOutstanding = 0;
  let dropAfter = 1; // the bind is dropped once, after its first message
  let n = 0;
  const sessions = new Set<Session>();
  const server = createServer((session) => {
    sessions.add(session);
    session.on('error', () => undefined);
    session.on('close', () => sessions.delete(session));
    session.on('bind_transceiver', (pdu: Pdu) => {
      const ok = pdu.system_id === 'sis' && pdu.password === 'secret';
      if (ok) binds++;
      session.send(pdu.response(ok ? {} : { command_status: 0x0e /* ESME_RINVPASWD */ }));
      if (!ok) session.close();
    });
    session.on('bind_transmitter', (pdu: Pdu) => {
      const ok = pdu.system_id === 'sis' && pdu.password === 'secret';
      session.send(pdu.response(ok ? {} : { command_status: 0x0e }));
      if (ok) session.on('unbind', (u: Pdu) => session.send(u.response()));
    });
    session.on('enquire_link', (pdu: Pdu) => session.send(pdu.response()));
    session.on('submit_sm', (pdu: Pdu) => {
      const raw = pdu.short_message ?? pdu.message_payload;
      const text = raw === undefined || Buffer.isBuffer(raw) ? '' : String(raw.message);
      submitted.push({
        to: pdu.destination_addr ?? '',
        from: pdu.source_addr ?? '',
        text,
        dataCoding: pdu.data_coding ?? -1,
        payload: pdu.message_payload !== undefined,
      });
      mostOutstanding = Math.max(mostOutstanding, ++outstanding);
      const id = `smsc-${++n}`;
      setTimeout(() => {
        outstanding--;
        session.send(pdu.response({ message_id: id }));
        const lost = (pdu.destination_addr ?? '').startsWith('96655');
        const stat = lost ? 'UNDELIV' : 'DELIVRD';
        session.deliver_sm({
          esm_class: 0x04,
          source_addr: pdu.destination_addr,
          destination_addr: pdu.source_addr,
          receipted_message_id: id,
          short_message: `id:${id} sub:001 dlvrd:${lost ? '000' : '001'} submit date:2611271200 done date:2611271201 stat:${stat} err:${lost ? '027' : '000'} text:x`,
        });
        if (--dropAfter === 0) setTimeout(() => session.destroy(), 100);
      }, holdMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `smpp://127.0.0.1:${(server.address() as AddressInfo).port}`,
    submitted,
    binds: () => binds,
    dropped: () => dropAfter <= 0 && sessions.size === 0,
    mostOutstanding: () => mostOutstanding,
    close: async () => {
      for (const s of sessions) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('the SMPP gateway against an SMSC (node-smpp server side)', () => {
  it('measures GSM 7-bit and Arabic codes by their segments', () => {
    assert.deepEqual(smsSize('Your code is 123456'), { encoding: 'GSM-7', segments: 1, characters: 19 });
    assert.deepEqual(smsSize('رمز التحقق الخاص بك هو 123456'), { encoding: 'UCS-2', segments: 1, characters: 29 });
    // 70 UCS-2 characters fit one segment; 71 take two (67 each).
    assert.equal(smsSize(`${'ر'.repeat(64)} 12345`).segments, 1);
    assert.equal(smsSize(`${'ر'.repeat(65)} 12345`).segments, 2);
    assert.equal(smsSize(`${'a'.repeat(154)}123456`).segments, 1);
    assert.equal(smsSize(`${'a'.repeat(155)}123456`).segments, 2);
  });

  it('binds, sends within the window, binds again after a drop, and records deliver_sm receipts', async () => {
    const smsc = await startSmsc(150);
    const server = await startTestServer({
      env: {
        ...SMS_DEFAULTS,
        SIS_SMS_GATEWAY: 'smpp',
        SIS_SMS_SMPP_URL: smsc.url,
        SIS_SMS_SMPP_SYSTEM_ID: 'sis',
        SIS_SMS_SMPP_PASSWORD: 'secret',
        SIS_SMS_SMPP_WINDOW: '2',
        SIS_SMS_SENDER_ID: 'School',
        SIS_SMS_TEMPLATE: 'رمز التحقق الخاص بك هو {code}',
        SIS_OUTBOX_POLL_MS: '50',
        SIS_OUTBOX_BACKOFF_MS: '100',
      },
    });
    try {
      const phones = ['+966501110001', '+966501110002', '+966501110003', '+966551110004', '+966501110005'];
      // The first alone: the SMSC drops the bind after it, with nothing outstanding.
      assert.equal((await authCode(server.url, phones[0]!, '10.8.0.0', '700000')).status, 200);
      await eventually(() => (smsc.submitted.length === 1 ? true : undefined), 30_000, 'the first code at the SMSC');
      await eventually(() => (smsc.binds() === 1 && smsc.dropped() ? true : undefined), 30_000, 'the drop');
      for (const [i, phone] of phones.entries())
        if (i > 0) assert.equal((await authCode(server.url, phone, `10.8.0.${i}`, `70000${i}`)).status, 200);
      await eventually(
        () => (smsc.submitted.length >= phones.length ? true : undefined),
        30_000,
        'every code at the SMSC',
      );
      // Each one once, Arabic as UCS-2 in one segment, from the sender id, to the number without +.
      assert.deepEqual(
        [...smsc.submitted]
          .sort((a, b) => (a.to < b.to ? -1 : 1))
          .map((s) => [s.to, s.from, s.dataCoding, s.payload, s.text]),
        phones
          .map((p, i) => [p.slice(1), 'School', 8, false, `رمز التحقق الخاص بك هو 70000${i}`] as const)
          .sort((a, b) => (a[0] < b[0] ? -1 : 1)),
      );
      assert.ok(smsc.mostOutstanding() <= 2, `at most the window outstanding, saw ${smsc.mostOutstanding()}`);
      // The SMSC dropped the first bind: the gateway bound again to send the rest.
      assert.ok(smsc.binds() >= 2, `bound again after the drop (${smsc.binds()} binds)`);
      const receipts = await eventually(
        async () => {
          const text = await (await fetch(`${server.url}/metrics`)).text();
          const delivered = /^sis_sms_delivery_total\{status="delivered"\} (\d+)$/m.exec(text)?.[1];
          const undelivered = /^sis_sms_delivery_total\{status="undelivered"\} (\d+)$/m.exec(text)?.[1];
          return delivered === '4' && undelivered === '1' ? text : undefined;
        },
        30_000,
        'the receipts',
      );
      assert.match(receipts, /^sis_outbox_deliveries_total\{gateway="smpp",result="delivered"\} 5$/m);
    } finally {
      await server.close();
      await smsc.close();
    }
  });

  it("refuses a bind with the wrong password, in sis check's probe, with what to check", async () => {
    const smsc = await startSmsc(0);
    try {
      const settings = { url: smsc.url, systemId: 'sis', password: 'wrong', bind: 'transceiver' as const, window: 1 };
      await assert.rejects(smppGateway(settings, null, 2000).probe(2000), /refused the bind .*SIS_SMS_SMPP_PASSWORD/);
      assert.match(await smppGateway({ ...settings, password: 'secret' }, null, 2000).probe(2000), /took the bind/);
    } finally {
      await smsc.close();
    }
  });
});
