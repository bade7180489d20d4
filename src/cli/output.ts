/** Where commands write, so tests can read it; and writing a stream's worth of text with back-pressure. */
import { once } from 'node:events';

export interface TextSink {
  write(text: string): unknown;
  /** Set on a terminal: progress bars are drawn only there. */
  readonly isTTY?: boolean;
  readonly columns?: number;
}

export interface CommandOutput {
  readonly stdout: TextSink;
  readonly stderr: TextSink;
}

export const processOutput: CommandOutput = { stdout: process.stdout, stderr: process.stderr };

/** A failure whose message is complete for the user (no database URL to prepend). */
export class CommandError extends Error {
  readonly code = 'ERR_COMMAND';
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'CommandError';
  }
}

/** Writes `text`, waiting for the sink to drain when it asks to (a pipe to a slow reader). */
export async function writeText(sink: TextSink, text: string): Promise<void> {
  const stream = sink as Partial<NodeJS.WritableStream & { destroyed: boolean; errored: Error | null }>;
  if (stream.destroyed === true)
    throw new CommandError(`the output was closed${stream.errored ? ` (${errorMessage(stream.errored)})` : ''}`);
  const accepted = sink.write(text);
  if (accepted !== false || typeof stream.once !== 'function') return;
  try {
    // once() rejects if the stream fails meanwhile (a closed pipe), so this never waits forever.
    await once(stream as NodeJS.EventEmitter, 'drain');
  } catch (error) {
    throw new CommandError(`the output was closed before the end (${errorMessage(error)})`, { cause: error });
  }
}

/** Writes a usage error and returns its exit code. */
export function usageError(output: CommandOutput, command: string, usage: string, message: string): number {
  output.stderr.write(`sis ${command}: ${message}\n\n${usage}`);
  return 2;
}

/** An error's message for a person; connection failures to several addresses have an empty one. */
export function errorMessage(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  if (error.message === '' && error instanceof AggregateError) return error.errors.map(errorMessage).join('; ');
  return error.message === '' ? ((error as NodeJS.ErrnoException).code ?? error.name) : error.message;
}
