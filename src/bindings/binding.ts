import type { ResultValue } from '../contract/types.js';
import type { ServiceError } from '../errors/errors.js';
import type { Reply } from '../reply/reply.js';
import type { ResultWriter } from '../xml/result-writer.js';
import type { Exchange } from './exchange.js';
import type { ServiceRoutes } from './service-routes.js';
import type { BindingName, Call } from './types.js';

/**
 * One protocol's rules, whole: SOAP 1.1 (soap-11.ts), SOAP 1.2 (soap-12.ts), HTTP GET
 * (http-get.ts) and HTTP POST (http-post.ts). The dispatcher picks one per request from the
 * route and never asks which it holds: `read` turns the request into a call, `write` a result
 * into the reply, `fail` an error into the reply; every status and content type is decided here.
 */
export interface Binding {
  readonly name: BindingName;
  /**
   * The call the request makes, or the error to answer it with; the binding that answers may
   * differ from the one asked (a SOAP envelope settles its own version). Synchronous: it is
   * first asked with no body, and may answer that it needs one; dispatch then reads the body
   * (answering a refused one with `fail`) and asks again with it.
   */
  read(ex: Exchange, routes: ServiceRoutes, body: Buffer | null): Read;
  /** The reply carrying an operation's result, written by the operation's writer. */
  write(writer: ResultWriter, value: ResultValue): Reply;
  /** The reply for an error: the request's, or the operation's. */
  fail(error: ServiceError): Reply;
}

/**
 * A request read: the call to make, the error to answer with, or the body wanted first; and the
 * binding that answers.
 */
export type Read =
  | { readonly binding: Binding; readonly call: Call; readonly error?: undefined; readonly wantsBody?: undefined }
  | {
      readonly binding: Binding;
      readonly error: ServiceError;
      readonly operation?: string | undefined;
      readonly wantsBody?: undefined;
    }
  | {
      readonly binding: Binding;
      readonly wantsBody: true;
      readonly operation?: string | undefined;
      readonly error?: undefined;
    };
