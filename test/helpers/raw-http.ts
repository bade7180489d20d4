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
}

/**
 * One HTTP/1.1 exchange over a plain socket, so tests control every byte a client sends
 * (header case, missing headers, lying lengths) and see every byte the server answers.
 */
export function rawRequest(url: string, req: RawRequest, options: { timeoutMs?: number } = {}): Promise<RawResponse> {
  const { hostname, port } = new URL(url);
  const body = req.body === undefined ? undefined : Buffer.isBuffer(req.body) ? req.body : Buffer.from(req.body);
  const names = new Set((req.headers ?? []).map(([n]) => n.toLowerCase()));
  const lines = [`${req.method} ${req.path} HTTP/1.1`];
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
        resolve(parseResponse(Buffer.concat(chunks), req.method === 'HEAD'));
      } catch (err) {
        reject(err instanceof Error ? err : new Error(String(err)));
      }
    });
  });
}

export function parseResponse(raw: Buffer, head = false): RawResponse {
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
  else if (headers.get('transfer-encoding') === 'chunked') throw new Error('chunked response: ASMX never chunks');
  else if (headers.has('content-length')) body = body.subarray(0, Number(headers.get('content-length')));
  return { status, headers, body };
}
