import { Writable } from 'node:stream';

/** A log destination (startTestServer's logDestination) that keeps every JSON line written to it, parsed. */
export function logCollector(): { stream: Writable; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split('\n')) if (l !== '') lines.push(JSON.parse(l) as Record<string, unknown>);
      done();
    },
  });
  return { stream, lines };
}
