// wasi:cli stdin/stdout/stderr and terminal-* as rt's own streams.
//
// They must be rt's classes, not preview2-shim's: the preview1 adapter asks
// for stdin on the first stderr write, and the glue checks every stream it is
// handed against the InputStream/OutputStream of the import object. Output goes to an OutputCapture, which the instance's owner flushes to
// the log under the service's name (sandbox/output-capture.ts). There is no
// terminal: the terminal-* getters answer none.

import type { OutputCapture, StreamName } from '../../sandbox/output-capture.js';
import { EMPTY_SOURCE, type ByteSink } from '../core/byte-queue.js';
import { assignRep } from '../core/host-objects.js';
import { InputStream, OutputStream } from './streams.js';

/** Output is captured, not sent anywhere that pushes back: any size is taken at once (the capture caps what it keeps). */
const CAPTURE_CAPACITY = 1 << 20;

function captured(output: OutputCapture, stream: StreamName): ByteSink {
  return { capacity: () => CAPTURE_CAPACITY, open: () => true, write: (bytes) => output.write(stream, bytes), failure: () => undefined };
}

/** Terminal resources exist only as types here: no getter ever returns one. */
export class TerminalInput {
  constructor() {
    assignRep(this);
  }

  [Symbol.dispose](): void {}
}
export class TerminalOutput {
  constructor() {
    assignRep(this);
  }

  [Symbol.dispose](): void {}
}

/** The wasi:cli entries, keyed as jco's glue asks for them (without versions). */
export function stdioImports(output: OutputCapture): Record<string, object> {
  // One stream each for the instance's life: the adapter may ask for them many times.
  const stdout = new OutputStream(captured(output, 'stdout'));
  const stderr = new OutputStream(captured(output, 'stderr'));
  return {
    'wasi:cli/stdin': { getStdin: (): InputStream => new InputStream(EMPTY_SOURCE) },
    'wasi:cli/stdout': { getStdout: (): OutputStream => stdout },
    'wasi:cli/stderr': { getStderr: (): OutputStream => stderr },
    'wasi:cli/terminal-input': { TerminalInput },
    'wasi:cli/terminal-output': { TerminalOutput },
    'wasi:cli/terminal-stdin': { getTerminalStdin: (): undefined => undefined },
    'wasi:cli/terminal-stdout': { getTerminalStdout: (): undefined => undefined },
    'wasi:cli/terminal-stderr': { getTerminalStderr: (): undefined => undefined },
  };
}
