import type { Reply } from '../reply/reply.js';
import type { LegacyAnswer } from './legacy-client.js';

/** Headers of the legacy answer the client gets as they are (besides status, Content-Type and body). */
const PASSED_THROUGH = [
  'Cache-Control',
  'Expires',
  'Pragma',
  'Vary',
  'ETag',
  'Last-Modified',
  'Location',
  'WWW-Authenticate',
  'Allow',
];

/** The legacy answer as a Reply: its bytes, and its cache headers over ours. */
export function passThrough(answer: LegacyAnswer): Reply {
  const headers: [string, string][] = [];
  for (const name of PASSED_THROUGH) {
    const value = answer.headers.get(name.toLowerCase());
    if (value !== undefined) headers.push([name, value]);
  }
  return {
    status: answer.status,
    contentType: answer.headers.get('content-type') ?? null,
    body: answer.body.length === 0 ? '' : [answer.body],
    invoked: false,
    headers,
  };
}
