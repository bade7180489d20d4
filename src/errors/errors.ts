import { AsmxText, chain } from './asmx-text.js';

/**
 * Every failure is one of these classes, with a stable `code`. Bindings turn them into their own
 * shapes (SOAP 1.1 fault, SOAP 1.2 fault, text/plain, an empty 400/415, an HTML page); nothing
 * here knows those shapes. `invoked` marks failures raised once the operation was called: ASMX
 * sends `Cache-Control: private, max-age=0` on those and `private` on everything earlier.
 */
export abstract class ServiceError extends Error {
  abstract readonly code: string;
  readonly invoked: boolean = false;
}

/** The request body is not well-formed XML, holds a DTD, or breaks a reader limit. */
export class XmlReadError extends ServiceError {
  readonly code = 'ERR_XML_MALFORMED';
  /**
   * @param message .NET's XmlException wording where we know it.
   * @param beforeBody true when the error comes before the first element of the SOAP body, the
   *   part ASMX reads while routing (there it is a server fault, later a bare 400).
   */
  constructor(
    message: string,
    readonly beforeBody: boolean,
  ) {
    super(message);
    this.name = 'XmlReadError';
  }
}

/** A SOAP request whose Content-Type the SOAP protocol does not take: 415, empty body. */
export class UnsupportedMediaTypeError extends ServiceError {
  readonly code = 'ERR_UNSUPPORTED_MEDIA_TYPE';
  constructor(readonly contentType: string) {
    super(AsmxText.WebRequestContent(contentType, 'text/xml'));
    this.name = 'UnsupportedMediaTypeError';
  }
}

/** SOAP fault codes, named as in SOAP 1.1; SOAP 1.2 renders Client/Server as Sender/Receiver. */
export type FaultCode = 'Client' | 'Server' | 'VersionMismatch' | 'MustUnderstand';

/** A SOAP fault raised by the SOAP protocol itself (routing, reading, headers). */
export class SoapFaultError extends ServiceError {
  readonly code = 'ERR_SOAP_FAULT';
  constructor(
    readonly faultCode: FaultCode,
    message: string,
    override readonly invoked = false,
  ) {
    super(message);
    this.name = 'SoapFaultError';
  }
}

/**
 * A protocol error of the HTTP GET/POST bindings: 500 text/plain with .NET's message. `messages`
 * is the exception chain, outermost first, as plain text (the binding encodes each one).
 */
export class HttpBindingError extends ServiceError {
  readonly code = 'ERR_HTTP_BINDING';
  readonly messages: readonly string[];
  constructor(...messages: [string, ...string[]]) {
    super(chain(...messages));
    this.messages = messages;
    this.name = 'HttpBindingError';
  }
}

/** An error answered with an HTML page: unknown paths (404), wrong verbs (405 or 500). */
export class PageError extends ServiceError {
  readonly code = 'ERR_PAGE';
  constructor(
    readonly status: 404 | 405 | 500,
    readonly title: string,
    message: string,
  ) {
    super(message);
    this.name = 'PageError';
  }
}

/** The request body is larger than the configured limit (ASMX's maxRequestLength). */
export class RequestTooLargeError extends ServiceError {
  readonly code = 'ERR_REQUEST_TOO_LARGE';
  constructor(readonly limit: number) {
    super(AsmxText.Max_request_length_exceeded());
    this.name = 'RequestTooLargeError';
  }
}

/**
 * The operation itself failed. `message` is safe to show a caller (never SQL, a path or a
 * stack); the cause goes to the log only.
 */
export class OperationFailedError extends ServiceError {
  readonly code = 'ERR_OPERATION_FAILED';
  override readonly invoked = true;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'OperationFailedError';
  }
}

/**
 * The operation refused its arguments (a malformed phone, too many codes). The caller must change
 * the request: SOAP answers a `soap:Client` fault with this message as it stands (as a method
 * throwing a client SoapException does), GET/POST a 500 text/plain.
 */
export class InvalidArgumentError extends ServiceError {
  readonly code: string = 'ERR_INVALID_ARGUMENT';
  override readonly invoked = true;
  constructor(message: string) {
    super(message);
    this.name = 'InvalidArgumentError';
  }
}

/** Too many requests of one kind (e.g. codes for one phone in an hour): a client fault too. */
export class QuotaExceededError extends InvalidArgumentError {
  override readonly code = 'ERR_QUOTA_EXCEEDED';
  constructor(message: string) {
    super(message);
    this.name = 'QuotaExceededError';
  }
}
