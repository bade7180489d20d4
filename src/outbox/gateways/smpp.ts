/**
 * SMPP 3.4, for a school with an account at a carrier or aggregator, over `smpp` (node-smpp): one
 * bind per process (transceiver, so delivery receipts come back on it, or transmitter), made at
 * the first message and kept; enquire_link every 30 s keeps it and finds it dead; when it drops,
 * it is bound again with a growing wait (1 s doubling to 60 s). At most SIS_SMS_SMPP_WINDOW
 * submit_sm wait for their answer at once; more wait their turn. A text that fits one segment is
 * sent as `short_message` (GSM 7-bit, or UCS-2 with data_coding 8 for Arabic); a longer one as
 * `message_payload`, which SMPP 3.4 SMSCs take whole. Receipts are deliver_sm with esm_class's
 * receipt bit, naming the message by the id submit_sm_resp gave (`receipted_message_id`, or `id:`
 * in the receipt's text) and its `stat:`.
 */
import { connect } from 'smpp';
import type { Pdu, Session } from 'smpp';
import type { SmppSettings } from '../../config/gateway-settings.js';
import { smsSize } from '../../sms/sms-segments.js';
import { GatewayError, refusalOf } from './gateway.js';
import type { Gateway, OutboundSms, ProviderReceipt } from './gateway.js';

const ENQUIRE_LINK_MS = 30_000;
const FIRST_RETRY_MS = 1000;
const LONGEST_RETRY_MS = 60_000;
/** esm_class bits 2-5: 0001 is an SMSC delivery receipt. */
const RECEIPT_BITS = 0x3c;
const SMSC_RECEIPT = 0x04;

/** The receipt text's `stat:` (SMPP 3.4 appendix B), and what it means here; null: on the way. */
const STAT: Readonly<Record<string, 'delivered' | 'undelivered' | 'failed' | null>> = {
  DELIVRD: 'delivered',
  UNDELIV: 'undelivered',
  EXPIRED: 'undelivered',
  DELETED: 'undelivered',
  REJECTD: 'failed',
  ACCEPTD: null,
  ENROUTE: null,
  UNKNOWN: null,
};
/** message_state TLV values, the same states by number. */
const STATE_STAT = ['', 'ENROUTE', 'DELIVRD', 'EXPIRED', 'DELETED', 'UNDELIV', 'ACCEPTD', 'UNKNOWN', 'REJECTD'];

/**
 * submit_sm_resp command_status values (SMPP 3.4, 5.1.3) that refuse this number for good:
 * ESME_RINVDSTADR 0x0B, ESME_RINVDSTTON 0x50, ESME_RINVDSTNPI 0x51, ESME_RX_P_APPN 0x64 (the
 * receiver's permanent error), ESME_RX_R_APPN 0x65 (rejected). The others (ESME_RTHROTTLED 0x58,
 * ESME_RMSGQFUL 0x14, ESME_RSYSERR 0x08, ESME_RX_T_APPN 0x63…) are tried again later.
 */
const FOR_GOOD = new Set([0x0b, 0x50, 0x51, 0x64, 0x65]);
/**
 * Those that refuse our account or configuration, whatever the number: ESME_RINVMSGLEN 0x01 (the
 * template's length), ESME_RINVSRCADR 0x0A (the sender id), ESME_RINVBNDSTS 0x04 (a bind that may
 * not submit: SIS_SMS_SMPP_BIND), ESME_RBINDFAIL 0x0D, ESME_RINVPASWD 0x0E, ESME_RINVSYSID 0x0F,
 * ESME_RINVSRCTON 0x48 and ESME_RINVSRCNPI 0x49 (the sender's numbering). Tried again later, and
 * the gateway is "refusing" at once.
 */
const ACCOUNT = new Set([0x01, 0x04, 0x0a, 0x0d, 0x0e, 0x0f, 0x48, 0x49]);

/** A deliver_sm read as a receipt; null: not one (a mobile-originated message, which is not ours to read). */
export function smppReceipt(pdu: Pdu): ProviderReceipt | null {
  if (((pdu.esm_class ?? 0) & RECEIPT_BITS) !== SMSC_RECEIPT) return null;
  const raw = pdu.short_message ?? pdu.message_payload;
  const body = raw === undefined ? '' : Buffer.isBuffer(raw) ? raw.toString('latin1') : String(raw.message);
  const id = pdu.receipted_message_id ?? /\bid:(\S+)/i.exec(body)?.[1];
  const stat = STATE_STAT[pdu.message_state ?? -1] || (/\bstat:(\w+)/i.exec(body)?.[1] ?? '').toUpperCase();
  if (id === undefined || id === '') return { ignore: 'a receipt without the message id' };
  const status = STAT[stat];
  if (status === undefined) return { ignore: `a receipt with stat ${JSON.stringify(stat)}` };
  if (status === null) return { ignore: `stat ${stat} is on the way` };
  const err = /\berr:(\w+)/i.exec(body)?.[1];
  return {
    message: { gatewayMessageId: id },
    status,
    reason: err === undefined || /^0+$/.test(err) ? `stat:${stat}` : `stat:${stat} err:${err}`,
    at: null,
  };
}

export function smppGateway(settings: SmppSettings, senderId: string | null, timeoutMs: number): Gateway {
  let session: Session | null = null;
  let bound: Promise<Session> | null = null;
  let retryMs = FIRST_RETRY_MS;
  let nextBindAt = 0;
  let lastProblem = '';
  let closed = false;
  let reconnect: NodeJS.Timeout | undefined;
  let onReceipt: ((receipt: ProviderReceipt) => void) | null = null;
  let outstanding = 0;
  const waiting: (() => void)[] = [];
  /** The submit_sm waiting for their answer: a bind that drops leaves them unsure at once, not at their time-out. */
  const unanswered = new Set<(err: GatewayError) => void>();

  /** Binds once; a bind that drops schedules the next (receipts keep coming) with a growing wait. */
  const bind = (): Promise<Session> => {
    bound ??= new Promise<Session>((resolve, reject) => {
      const s = connect({ url: settings.url, auto_enquire_link_period: ENQUIRE_LINK_MS });
      let up = false;
      const dropped = (why: string): void => {
        if (session === s) session = null;
        for (const fail of unanswered)
          fail(new GatewayError('unsure', `smpp: the bind dropped before submit_sm_resp (${why})`));
        unanswered.clear();
        bound = null;
        lastProblem = why;
        nextBindAt = Date.now() + retryMs;
        if (!up) reject(new GatewayError('unreachable', `smpp: ${why}`));
        if (!closed && onReceipt !== null && reconnect === undefined) {
          reconnect = setTimeout(() => {
            reconnect = undefined;
            bind().catch(() => undefined);
          }, retryMs);
          reconnect.unref();
        }
        retryMs = Math.min(retryMs * 2, LONGEST_RETRY_MS);
      };
      s.on('error', (err: Error) => dropped((err as NodeJS.ErrnoException).code ?? err.message));
      s.on('close', () => dropped(lastProblem === '' ? 'the SMSC closed the bind' : lastProblem));
      s.on('deliver_sm', (pdu: Pdu) => {
        s.send(pdu.response());
        const receipt = smppReceipt(pdu);
        if (receipt !== null) onReceipt?.(receipt);
      });
      s.on('unbind', (pdu: Pdu) => {
        s.send(pdu.response());
        s.close();
      });
      s.on('connect', () => {
        const credentials = { system_id: settings.systemId, password: settings.password };
        const answer = (pdu: Pdu): void => {
          if (pdu.command_status !== 0) {
            lastProblem = `bind refused (command_status ${pdu.command_status}): check SIS_SMS_SMPP_SYSTEM_ID and SIS_SMS_SMPP_PASSWORD`;
            s.close();
            return;
          }
          up = true;
          session = s;
          retryMs = FIRST_RETRY_MS;
          lastProblem = '';
          resolve(s);
        };
        if (settings.bind === 'transceiver') s.bind_transceiver(credentials, answer);
        else s.bind_transmitter(credentials, answer);
      });
    });
    return bound;
  };

  /** A place in the window of outstanding submit_sm. */
  const slot = async (): Promise<void> => {
    while (outstanding >= settings.window) await new Promise<void>((resolve) => waiting.push(resolve));
    outstanding++;
  };
  const release = (): void => {
    outstanding--;
    waiting.shift()?.();
  };

  return {
    name: 'smpp',
    async send(message: OutboundSms) {
      if (closed) throw new GatewayError('unreachable', 'smpp: closing');
      if (session === null && bound === null && Date.now() < nextBindAt)
        throw new GatewayError(
          'unreachable',
          `smpp: not bound (${lastProblem}); next bind in ${nextBindAt - Date.now()} ms`,
        );
      const s = session ?? (await bind());
      const size = smsSize(message.message);
      // node-smpp encodes the text by data_coding: 0, the SMSC's default alphabet (GSM 03.38); 8, UCS-2.
      const text = { data_coding: size.encoding === 'UCS-2' ? 8 : 0 };
      const body = size.segments === 1 ? { short_message: message.message } : { message_payload: message.message };
      await slot();
      try {
        const pdu = await new Promise<Pdu>((resolve, reject) => {
          const fail = (err: GatewayError): void => {
            clearTimeout(timer);
            unanswered.delete(fail);
            reject(err);
          };
          const timer = setTimeout(
            () => fail(new GatewayError('unsure', `smpp: no submit_sm_resp within ${timeoutMs} ms`)),
            timeoutMs,
          );
          unanswered.add(fail);
          const sent = s.submit_sm(
            {
              ...(senderId === null
                ? {}
                : { source_addr: senderId, source_addr_ton: /^\+?\d+$/.test(senderId) ? 1 : 5 }),
              destination_addr: message.phone.replace(/^\+/, ''),
              dest_addr_ton: message.phone.startsWith('+') ? 1 : 0,
              dest_addr_npi: 1,
              registered_delivery: settings.bind === 'transceiver' ? 1 : 0,
              ...text,
              ...body,
            },
            (answer) => {
              clearTimeout(timer);
              unanswered.delete(fail);
              resolve(answer);
            },
          );
          if (!sent) fail(new GatewayError('unreachable', 'smpp: the bind is not writable'));
        });
        if (pdu.command_status !== 0)
          throw new GatewayError(
            refusalOf(pdu.command_status, FOR_GOOD, ACCOUNT),
            `smpp: submit_sm refused (command_status 0x${pdu.command_status.toString(16)})`,
          );
        return { gatewayMessageId: pdu.message_id ?? null };
      } finally {
        release();
      }
    },
    async probe(probeMs) {
      // A bind of its own, then unbind: the credentials checked, nothing sent.
      return new Promise<string>((resolve, reject) => {
        const s = connect({ url: settings.url });
        const timer = setTimeout(() => {
          s.destroy();
          reject(new Error(`the SMSC at ${settings.url} did not bind within ${probeMs} ms`));
        }, probeMs);
        s.on('error', (err: Error) => {
          clearTimeout(timer);
          reject(
            new Error(
              `the SMSC at ${settings.url} does not answer (${(err as NodeJS.ErrnoException).code ?? err.message})`,
            ),
          );
        });
        s.on('connect', () => {
          s.bind_transmitter({ system_id: settings.systemId, password: settings.password }, (pdu) => {
            clearTimeout(timer);
            if (pdu.command_status !== 0) {
              s.destroy();
              reject(
                new Error(
                  `the SMSC refused the bind (command_status ${pdu.command_status}): check SIS_SMS_SMPP_SYSTEM_ID and SIS_SMS_SMPP_PASSWORD`,
                ),
              );
              return;
            }
            s.unbind({}, () => s.close());
            resolve(`the SMSC at ${settings.url} took the bind`);
          });
        });
      });
    },
    listen(receipts) {
      onReceipt = receipts;
      // Receipts come over the bind: keep one from the start, not only from the first message.
      bind().catch(() => undefined);
    },
    async close() {
      closed = true;
      clearTimeout(reconnect);
      const s = session;
      if (s === null) return;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => s.destroy(() => resolve()), 1000);
        s.unbind({}, () => {
          clearTimeout(timer);
          s.close(() => resolve());
        });
      });
    },
  };
}
