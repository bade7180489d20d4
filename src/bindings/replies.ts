import {
  HttpBindingError,
  InvalidArgumentError,
  OperationFailedError,
  PageError,
  RequestTooLargeError,
  SoapFaultError,
  UNABLE_TO_PROCESS,
  UnsupportedMediaTypeError,
  XmlReadError,
} from '../errors/errors.js';
import type { ServiceError } from '../errors/errors.js';
import { escapeHtml } from '../xml/escape.js';
import { wrapBody } from '../xml/chunked-text.js';
import { XML_DECLARATION } from '../xml/namespaces.js';
import type { ResultWriter } from '../xml/result-writer.js';
import type { ResultValue } from '../contract/types.js';
import type { SoapVersion } from './soap-version.js';
import type { Refusal, Reply } from './types.js';

/**
 * Results and errors into replies, one function per binding family, and the answers given before
 * any binding is chosen (refusals, a failure of our own, requests node:http could not parse).
 * These are the only places that decide status codes and content types.
 */

export function soapReply(version: SoapVersion, writer: ResultWriter, value: ResultValue): Reply {
  return {
    status: 200,
    contentType: version.contentType,
    body: wrapBody(version.head, writer.soapBody(value), version.tail),
    invoked: true,
  };
}

/** 400 and 415 carry no body (ASMX writes a fault only with status 500); the rest are faults. */
export function soapErrorReply(version: SoapVersion, err: ServiceError): Reply {
  if (err instanceof XmlReadError) return { status: 400, contentType: version.contentType, body: '', invoked: false };
  if (err instanceof UnsupportedMediaTypeError) {
    return { status: 415, contentType: version.contentType, body: '', invoked: false };
  }
  if (err instanceof SoapFaultError) {
    return {
      status: 500,
      contentType: version.contentType,
      body: version.fault(err.faultCode, err.message),
      invoked: err.invoked,
    };
  }
  if (err instanceof InvalidArgumentError) {
    return { status: 500, contentType: version.contentType, body: version.fault('Client', err.message), invoked: true };
  }
  if (err instanceof RequestTooLargeError) {
    const msg = `There was an exception running the extensions specified in the config file. ---> ${err.message}`;
    return { status: 500, contentType: version.contentType, body: version.fault('Server', msg), invoked: false };
  }
  const msg = err instanceof OperationFailedError ? err.message : 'An internal error occurred.';
  return {
    status: 500,
    contentType: version.contentType,
    body: version.fault('Server', `${UNABLE_TO_PROCESS} ---> ${msg}`),
    invoked: err.invoked,
  };
}

const TEXT_XML = 'text/xml; charset=utf-8';

/** A void result is 200 with no body and no Content-Type at all, as ASMX answers. */
export function httpReply(writer: ResultWriter, value: ResultValue): Reply {
  const doc = writer.httpDocument(value);
  if (doc === null) return { status: 200, contentType: null, body: '', invoked: true };
  return { status: 200, contentType: TEXT_XML, body: wrapBody(`${XML_DECLARATION}\n`, doc, ''), invoked: true };
}

/**
 * GET/POST errors are 500 text/plain: the message HTML-encoded as .NET writes it, ending in CRLF.
 * HttpBindingError messages are already encoded part by part (the ` ---> ` joiner is not).
 */
export function httpErrorReply(err: ServiceError): Reply {
  if (err instanceof PageError) return pageReply(err);
  const text =
    err instanceof HttpBindingError
      ? err.message
      : err instanceof OperationFailedError ||
          err instanceof RequestTooLargeError ||
          err instanceof InvalidArgumentError
        ? escapeHtml(err.message)
        : 'An internal error occurred.';
  return { status: 500, contentType: 'text/plain; charset=utf-8', body: `${text}\r\n`, invoked: err.invoked };
}

/** Our own plain HTML error page (ASMX's yellow screens are not reproduced byte for byte). */
export function pageReply(err: PageError): Reply {
  const body = `<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>${escapeHtml(err.title)}</title>
<style>body{font-family:Verdana,Arial,sans-serif;margin:2em;color:#000}h1{font-size:1.4em;color:#c00}p{font-size:.9em}</style></head>
<body>
<h1>${escapeHtml(err.title)}</h1>
<p>${escapeHtml(err.message)}</p>
</body>
</html>
`;
  return { status: err.status, contentType: 'text/html; charset=utf-8', body, invoked: false };
}

const TEXT_PLAIN = 'text/plain; charset=utf-8';

/** A refusal before dispatch; the body was not read. */
export function refusalReply(refusal: Refusal): Reply {
  switch (refusal.reason) {
    case 'address':
      return {
        status: 403,
        contentType: TEXT_PLAIN,
        body: 'Forbidden: this client address is not allowed.\r\n',
        invoked: false,
      };
    case 'key':
      return {
        status: 401,
        contentType: TEXT_PLAIN,
        body: 'Unauthorized: a valid API key is required (X-Api-Key header or HTTP Basic password).\r\n',
        invoked: false,
        headers: [['WWW-Authenticate', `Basic realm="${refusal.realm}", charset="UTF-8"`]],
      };
    case 'rate': {
      const seconds = Math.max(1, Math.ceil(refusal.retryAfterMs / 1000));
      return {
        status: 429,
        contentType: TEXT_PLAIN,
        body: 'Too Many Requests: slow down and retry later.\r\n',
        invoked: false,
        headers: [['Retry-After', String(seconds)]],
      };
    }
  }
}

/** A failure of ours outside any operation: safe words only, the cause goes to the log. */
export const INTERNAL_ERROR: Reply = {
  status: 500,
  contentType: TEXT_PLAIN,
  body: 'An internal error occurred.\r\n',
  invoked: false,
};

/**
 * The whole raw answer to a request node:http could not parse (no request object exists, so no
 * Reply): 431 for oversized headers, 408 when the request did not arrive in time, else 400.
 */
export function unparsableRequestAnswer(errorCode: string | undefined): string {
  const status = errorCode === 'HPE_HEADER_OVERFLOW' ? 431 : errorCode === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
  const text = status === 431 ? 'Request Header Fields Too Large' : status === 408 ? 'Request Timeout' : 'Bad Request';
  return `HTTP/1.1 ${status} ${text}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`;
}
