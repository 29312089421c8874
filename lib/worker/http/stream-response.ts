// A streamed answer on the wire (docs/api.md §5.1.1): chunked, its headers out
// as soon as the method has returned its resource, the items written as they
// come (those made together in one write). The reader sets the pace: the
// stream's ring frees room for the instance thread only as written bytes
// leave for the socket, so a slow reader stops `next` instead of filling the
// worker's memory (at most WINDOW_BYTES per stream, plus one item). A client
// that goes away ends the stream (the resource is dropped); a failure after
// the headers cuts the body short, without the final chunk, so no client
// takes a broken stream for a whole one.

import type { Logger } from 'pino';
import { CLIENT_CLOSED_REQUEST, type ApiError } from '../../errors.js';
import { COMPONENT_CONTENT_HEADERS, setAnswerHeaders, type ApiCall } from './api-call.js';
import { CreditedWrites, WINDOW_BYTES } from './credited-writes.js';
import type { Framing, StreamFailure, StreamControl, StreamSink } from '../execution/invocation.js';
import type { Series, StreamOutcome } from './request-stats.js';
import { sseError } from '../execution/stream-framing.js';

export interface StreamAnswer {
  mediaType: string;
  framing: Framing;
  series: Series;
  log: Logger;
  /** The error (docs/api.md §5.5) for a failure after the headers (for the log line and the SSE error event). */
  failure: (failure: StreamFailure) => ApiError;
  /** Opens the stream with this sink; rejects (with the ApiError to answer) when it cannot. */
  open: (sink: StreamSink, window: number) => Promise<StreamControl>;
}

/** Answers `call` with a stream; resolves once the stream has ended, however it ended. */
export async function answerWithStream(call: ApiCall, answer: StreamAnswer): Promise<void> {
  const { res, state } = call;
  const { series, framing } = answer;
  // Set once the stream opens; the sink's callbacks, made before that, read it when they run.
  // eslint-disable-next-line prefer-const
  let control: StreamControl | undefined;
  let outcome: StreamOutcome | undefined;
  /** Whether the headers went out, and the stream is counted as open. */
  let started = false;
  const writes = new CreditedWrites(res, (bytes) => control?.grant(bytes));
  let finished!: () => void;
  const done = new Promise<void>((resolve) => (finished = resolve));
  const stats = { items: 0, bytes: 0 };

  const writeHeaders = () => {
    if (res.headersSent) return;
    res.statusCode = 200;
    setAnswerHeaders(res, state.answerHeaders);
    res.setHeader('Content-Type', framing === 'sse' ? 'text/event-stream' : answer.mediaType);
    res.setHeader('Cache-Control', 'no-cache');
    for (const [name, value] of Object.entries(COMPONENT_CONTENT_HEADERS)) res.setHeader(name, value);
    res.flushHeaders();
    started = true;
    series.streamsOpen++;
  };
  const end = (how: StreamOutcome) => {
    if (outcome) return false;
    outcome = how;
    state.stream = { ...stats, outcome: how };
    if (started) series.streamEnded(how);
    finished();
    return true;
  };
  const sink: StreamSink = {
    chunk(bytes, items) {
      if (outcome) return void control?.grant(bytes.byteLength);
      writeHeaders();
      stats.items += items;
      stats.bytes += bytes.byteLength;
      series.streamItems += items;
      series.streamBytes += bytes.byteLength;
      // Bytes that arrive together leave together (credited-writes.ts).
      writes.write(bytes);
    },
    end(failure) {
      writeHeaders();
      if (!end(failure ? 'failed' : 'completed')) return;
      if (!failure) return writes.end();
      const error = answer.failure(failure);
      answer.log.warn({ error: error.error, details: error.details, items: stats.items }, 'stream failed after its headers were sent');
      // Without the final chunk, the client sees the body cut short; SSE clients get told why first.
      // The items written before the failure still go out: the socket ends once they have left.
      writes.cut(framing === 'sse' ? sseError(error.body()) : undefined);
    },
  };

  // Only a close before the end is the client's doing; the stream's own end also closes the response.
  res.once('close', () => {
    if (!res.writableFinished && end('client closed')) control?.cancel();
  });
  control = await answer.open(sink, WINDOW_BYTES);
  if (outcome === 'client closed' && !started) {
    // Gone while its call waited or ran: nobody to answer.
    control.cancel();
    res.statusCode = CLIENT_CLOSED_REQUEST;
    return;
  }
  writeHeaders();
  await done;
}

