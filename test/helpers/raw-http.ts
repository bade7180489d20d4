import { connect } from 'node:net';

export interface RawResponse {
  readonly status: number;
  /** Header names lower-cased; repeated headers joined with ", ". */
  readonly headers: ReadonlyMap<string, string>;
  readonly body: Buffer;
}

export interface RawRequest {
  readonly method: string;
  /** The request target, sent byte for byte as given (UTF-8). */
  readonly path: string;
  readonly headers?: ReadonlyArray<readonly [string, string]>;
  readonly body?: Buffer | string;
  /** The request line's version (default 1.1). */
  readonly version?: '1.0' | '1.1';
}

export interface RawOptions {
  readonly timeoutMs?: number;
  /** Accept a chunked answer (a streamed long list) and de-chunk its body; by default it is an error. */
  readonly chunked?: boolean;
}

/**
 * One HTTP/1.1 exchange over a plain socket, so tests control every byte a client sends
 * (header case, missing headers, lying lengths) and see every byte the server answers.
 */
export function rawRequest(url: string, req: RawRequest, options: RawOptions = {}): Promise<RawResponse> {
  const { hostname, port } = new URL(url);
  const body = req.body === undefined ? undefined : Buffer.isBuffer(req.body) ? req.body : Buffer.from(req.body);
  const names = new Set((req.headers ?? []).map(([n]) => n.toLowerCase()));
  const lines = [`${req.method} ${req.path} HTTP/${req.version ?? '1.1'}`];
  if (!names.has('host')) lines.push(`Host: ${hostname}:${port}`);
  for (const [n, v] of req.headers ?? []) lines.push(`${n}: ${v}`);
  if (body !== undefined && !names.has('content-length') && !names.has('transfer-encoding')) {
    lines.push(`Content-Length: ${body.length}`);
  }
  lines.push('Connection: close', '', '');
  const head = Buffer.from(lines.join('\r\n'), 'utf8');
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no complete answer within ${options.timeoutMs ?? 10_000} ms`));
    }, options.timeoutMs ?? 10_000);
    socket.on('connect', () => {
      socket.write(body === undefined ? head : Buffer.concat([head, body]));
    });
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    socket.on('close', () => {
      clearTimeout(timer);
      try {
        resolve(parseResponse(Buffer.concat(chunks), req.method === 'HEAD', options.chunked === true));
      } catch (err) {
        reject(err instanceof Error ? err : new Error(String(err)));
      }
    });
  });
}

export function parseResponse(raw: Buffer, head = false, chunked = false): RawResponse {
  const end = raw.indexOf('\r\n\r\n');
  if (end < 0) throw new Error(`incomplete HTTP response: ${JSON.stringify(raw.toString('latin1').slice(0, 200))}`);
  const lines = raw.subarray(0, end).toString('latin1').split('\r\n');
  const status = Number(lines[0]!.split(' ')[1]);
  const headers = new Map<string, string>();
  for (const line of lines.slice(1)) {
    const i = line.indexOf(':');
    const name = line.slice(0, i).trim().toLowerCase();
    const value = line.slice(i + 1).trim();
    headers.set(name, headers.has(name) ? `${headers.get(name)!}, ${value}` : value);
  }
  let body = raw.subarray(end + 4);
  if (head) body = Buffer.alloc(0);
  else if (headers.get('transfer-encoding') === 'chunked') {
    if (!chunked) throw new Error('chunked response: ASMX never chunks');
    body = dechunk(body);
  } else if (headers.has('content-length')) body = body.subarray(0, Number(headers.get('content-length')));
  return { status, headers, body };
}

/** The body of a chunked answer; throws when it is cut before its last (empty) chunk. */
export function dechunk(raw: Buffer): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const eol = raw.indexOf('\r\n', at);
    if (eol < 0) throw new Error(`chunked answer cut short after ${at} bytes`);
    const size = parseInt(raw.subarray(at, eol).toString('latin1'), 16);
    if (!Number.isFinite(size)) throw new Error(`bad chunk size at byte ${at}`);
    if (size === 0) {
      if (raw.subarray(eol, eol + 4).toString('latin1') !== '\r\n\r\n')
        throw new Error('chunked answer cut short in its last chunk');
      return Buffer.concat(parts);
    }
    const start = eol + 2;
    if (raw.length < start + size + 2) throw new Error(`chunked answer cut short in a chunk at byte ${at}`);
    parts.push(raw.subarray(start, start + size));
    at = start + size + 2;
  }
}
