/** The part of the `smpp` package (node-smpp, no types of its own) the SMPP gateway and its test use. */
declare module 'smpp' {
  import type { EventEmitter } from 'node:events';
  import type { Server as NetServer } from 'node:net';

  export interface Pdu {
    readonly command: string;
    readonly command_status: number;
    readonly sequence_number: number;
    readonly message_id?: string;
    readonly system_id?: string;
    readonly password?: string;
    readonly source_addr?: string;
    readonly destination_addr?: string;
    readonly esm_class?: number;
    readonly data_coding?: number;
    readonly registered_delivery?: number;
    readonly short_message?: { readonly message: string | Buffer } | Buffer;
    readonly message_payload?: { readonly message: string | Buffer } | Buffer;
    readonly receipted_message_id?: string;
    readonly message_state?: number;
    response(options?: Record<string, unknown>): Pdu;
  }

  export class Session extends EventEmitter {
    send(pdu: Pdu, response?: (pdu: Pdu) => void): boolean;
    bind_transceiver(options: Record<string, unknown>, response: (pdu: Pdu) => void): boolean;
    bind_transmitter(options: Record<string, unknown>, response: (pdu: Pdu) => void): boolean;
    submit_sm(options: Record<string, unknown>, response: (pdu: Pdu) => void): boolean;
    deliver_sm(options: Record<string, unknown>, response?: (pdu: Pdu) => void): boolean;
    unbind(options?: Record<string, unknown>, response?: (pdu: Pdu) => void): boolean;
    close(callback?: () => void): void;
    destroy(callback?: () => void): void;
  }

  export function connect(
    options: { readonly url: string; readonly auto_enquire_link_period?: number },
    listener?: () => void,
  ): Session;
  export function createServer(listener: (session: Session) => void): NetServer;
  export const ESME_ROK: number;
  export const ESME_RBINDFAIL: number;
  export const ESME_RTHROTTLED: number;
  export const ESME_RINVDSTADR: number;
}
