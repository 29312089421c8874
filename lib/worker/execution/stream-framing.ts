// The bytes a streamed answer is made of (docs/api.md §5.1.1): each item as it
// goes on the wire, and the event that ends a Server-Sent Events stream that
// failed. Items are framed where they are made (the instance thread), as the
// string or bytes the stream's ring encodes or copies in place
// (byte-ring.ts), so the main thread only writes bytes.

import { typeCodec } from '../../wit/codec.js';
import type { StreamSignature } from '../../wit/streaming.js';
import type { Framing } from './invocation.js';

/** An item as it goes on the wire: bytes, or a string sent as its UTF-8. */
export type Framer = (item: unknown) => Uint8Array | string;

const encoder = new TextEncoder();

/** How `stream`'s items are framed with `framing`. */
export function framer(stream: StreamSignature, framing: Framing): Framer {
  const json = typeCodec(stream.item).encode;
  switch (framing) {
    case 'raw':
      if (stream.encoding === 'bytes') return (item) => item as Uint8Array;
      if (stream.encoding === 'text') return (item) => item as string;
      return ndjson(json);
    case 'ndjson':
      return ndjson(json);
    case 'sse':
      return (item) => `data: ${JSON.stringify(json(item))}\n\n`;
  }
}

function ndjson(json: (item: unknown) => unknown): Framer {
  return (item) => `${JSON.stringify(json(item))}\n`;
}

/** The event that ends a failed SSE stream: `event: error` with the error body (docs/api.md §5.5) as its data. */
export function sseError(body: Record<string, unknown>): Uint8Array {
  return encoder.encode(`event: error\ndata: ${JSON.stringify(body)}\n\n`);
}

/** The framing a request gets: SSE when it accepts text/event-stream, else the items' own encoding. */
export function framingFor(stream: StreamSignature, accept: string | undefined): Framing {
  if (accept?.includes('text/event-stream')) return 'sse';
  return stream.encoding === 'ndjson' ? 'ndjson' : 'raw';
}
