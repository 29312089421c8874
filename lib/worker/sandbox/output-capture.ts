// A component's stdout and stderr. preview2-shim writes them to its thread's
// process.stdout/stderr; rt sends them to the log under the service's name
// instead, capped per call and stream (enough to debug with, too little to
// flood the log). Writes go to the capture that is active at the time: an
// instance thread keeps one active for good; the worker's main thread
// activates one around each inline call, so output lands with the service
// that wrote it, and a call that is interrupted and made again on a thread
// logs its output once (the interrupted attempt's is dropped). rt's own log
// lines never pass through here: pino writes to the file descriptor itself.

/** Output kept per stream and call. */
export const OUTPUT_LIMIT = 16 * 1024;

export type StreamName = 'stdout' | 'stderr';

export interface CapturedText {
  stream: StreamName;
  text: string;
  /** Characters beyond the limit, not kept. */
  dropped: number;
}

export class OutputCapture {
  readonly #text: Record<StreamName, string> = { stdout: '', stderr: '' };
  readonly #dropped: Record<StreamName, number> = { stdout: 0, stderr: 0 };

  write(stream: StreamName, chunk: string | Uint8Array): void {
    const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
    const room = OUTPUT_LIMIT - this.#text[stream].length;
    if (room > 0) this.#text[stream] += text.slice(0, room);
    this.#dropped[stream] += Math.max(0, text.length - Math.max(room, 0));
  }

  /** What was written since the last take, per stream that has any. */
  take(): CapturedText[] {
    const taken: CapturedText[] = [];
    for (const stream of ['stdout', 'stderr'] as const) {
      if (!this.#text[stream] && !this.#dropped[stream]) continue;
      taken.push({ stream, text: this.#text[stream], dropped: this.#dropped[stream] });
      this.#text[stream] = '';
      this.#dropped[stream] = 0;
    }
    return taken;
  }
}

let active: OutputCapture | undefined;
let installed = false;

/** Routes this thread's stdout/stderr writes to the active capture (once per thread). */
function install(): void {
  if (installed) return;
  installed = true;
  for (const stream of ['stdout', 'stderr'] as const) {
    const original = process[stream].write.bind(process[stream]);
    process[stream].write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
      if (!active) return (original as (...args: unknown[]) => boolean)(chunk, ...rest);
      active.write(stream, chunk);
      return true;
    });
  }
}

/** Runs `fn` with `capture` receiving the thread's output. */
export function capturing<T>(capture: OutputCapture, fn: () => T): T {
  install();
  const previous = active;
  active = capture;
  try {
    return fn();
  } finally {
    active = previous;
  }
}

/**
 * What a guest writes when no call of it may be running (a WASI 0.3 stream the host reads on after the call
 * returned): to the active capture, an instance thread's always; else dropped, never to the process's own
 * stdout, which is rt's log.
 */
export function writeCaptured(stream: StreamName, chunk: Uint8Array): void {
  active?.write(stream, chunk);
}

/** Makes `capture` receive the thread's output from now on (an instance thread's, for its whole life). */
export function captureAll(capture: OutputCapture): void {
  install();
  active = capture;
}
