import { AsmxText } from '../errors/asmx-text.js';
import { PageError } from '../errors/errors.js';
import type { Reply } from '../reply/reply.js';
import { escapeHtml } from '../xml/escape.js';
import type { Refusal } from './types.js';

/**
 * The answers given before any binding is chosen: a target that names nothing, a verb or shape
 * that is no request format, refusals, a failure of our own, requests node:http could not parse.
 * Each binding decides its own replies (binding.ts).
 */

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

/** A target that names no service file. */
export const NOT_FOUND = pageReply(
  new PageError(
    404,
    'The resource cannot be found.',
    'The requested URL was not found on this server. Check the service file name.',
  ),
);

/** `/X.asmx` with a verb other than GET (pages) and POST (SOAP). */
export const METHOD_NOT_ALLOWED = pageReply(
  new PageError(405, 'Method Not Allowed', AsmxText.WebUnrecognizedRequestFormat()),
);

/** A query form of the description we do not serve (`?wsdl=x`, `?schema=x`). */
export const NO_SUCH_DESCRIPTION = pageReply(
  new PageError(
    404,
    'The resource cannot be found.',
    'This service has one service description, with no separate parts: ask for ?WSDL (or ?disco).',
  ),
);

/** `/X.asmx/Op` with a verb other than GET and POST, or with no operation name. */
export function unrecognizedFormat(opPath: string): Reply {
  const message = AsmxText.WebUnrecognizedRequestFormatUrl(`/${opPath}`);
  return pageReply(new PageError(500, AsmxText.WebUnrecognizedRequestFormat(), message));
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

/** A request with more than one Host header (RFC 9112 3.2: a 400). */
export const ONE_HOST: Reply = {
  status: 400,
  contentType: TEXT_PLAIN,
  body: 'Bad Request: a request has exactly one Host header; this one has several.\r\n',
  invoked: false,
};

/** A failure of ours outside any operation: safe words only, the cause goes to the log. */
export const INTERNAL_ERROR: Reply = {
  status: 500,
  contentType: TEXT_PLAIN,
  body: `${AsmxText.InternalError()}\r\n`,
  invoked: false,
};

/**
 * The whole raw answer to CONNECT: this is an origin server, not a proxy, so no tunnel is opened
 * (RFC 9110 9.3.6); 405 names the methods its resources take, and the connection closes.
 */
export function connectAnswer(): string {
  const body = 'Method Not Allowed: CONNECT opens a tunnel through a proxy; this is not one.\r\n';
  return (
    'HTTP/1.1 405 Method Not Allowed\r\nAllow: GET, HEAD, POST\r\nContent-Type: text/plain; charset=utf-8\r\n' +
    `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`
  );
}

/**
 * The whole raw answer to a request node:http could not parse (no request object exists, so no
 * Reply): 431 for oversized headers, 408 when the request did not arrive in time, else 400.
 */
export function unparsableRequestAnswer(errorCode: string | undefined): string {
  const status = errorCode === 'HPE_HEADER_OVERFLOW' ? 431 : errorCode === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
  const text = status === 431 ? 'Request Header Fields Too Large' : status === 408 ? 'Request Timeout' : 'Bad Request';
  return `HTTP/1.1 ${status} ${text}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`;
}
