// Shows an invoke's answer as it is: JSON pretty-printed, an image for image/*
// bytes, text for text/*, other bytes as a download; and a streamed answer's
// items as they arrive (docs/api.md §5.1.1), read from the response body stream.

import { describeError } from './api.js';
import { append, fill, h } from './dom.js';

/** Items kept on screen for a long stream (the oldest go first). */
const MAX_ITEMS = 500;
/** Characters kept on screen for a long text stream. */
const MAX_TEXT = 65_536;

export interface AnswerView {
  element: HTMLElement;
  /** Renders `res` into the view; resolves when its body has been read to the end (or aborted). */
  show(res: Response, startedAt: number, streamed: boolean): Promise<void>;
  error(message: string): void;
  clear(): void;
}

export function answerView(): AnswerView {
  const status = h('div', { class: 'answer-status' });
  const body = h('div', { class: 'answer-body' });
  const element = h('div', { class: 'answer' }, status, body);
  let objectUrl: string | undefined;

  const clear = () => {
    if (objectUrl) URL.revokeObjectURL(objectUrl);
    objectUrl = undefined;
    fill(status);
    fill(body);
    element.classList.remove('failed');
  };
  const blobUrl = (blob: Blob) => (objectUrl = URL.createObjectURL(blob));

  const statusLine = (res: Response, startedAt: number, extra = '') => {
    const type = res.headers.get('content-type') ?? 'no content type';
    const worker = res.headers.get('x-rt-worker');
    fill(status, `${res.status} ${res.statusText} · ${type} · ${Math.round(performance.now() - startedAt)} ms${worker ? ` · worker ${worker}` : ''}${extra}`);
  };

  return {
    element,
    clear,
    error(message) {
      clear();
      element.classList.add('failed');
      fill(status, message);
    },
    async show(res, startedAt, streamed) {
      clear();
      statusLine(res, startedAt);
      element.classList.toggle('failed', !res.ok);
      // No content (a dropped handle): the status line says it all.
      if (res.status === 204) return;
      const type = (res.headers.get('content-type') ?? '').split(';')[0].trim().toLowerCase();
      if (streamed && res.ok && res.body) return showStream(res, type, body, (summary) => statusLine(res, startedAt, ` · ${summary}`));
      if (type === 'application/json' || type.endsWith('+json')) {
        const text = await res.text();
        let value: unknown;
        try {
          value = JSON.parse(text);
        } catch {
          return fill(body, h('pre', { class: 'json' }, text));
        }
        fill(body, h('pre', { class: 'json' }, JSON.stringify(value, null, 2)));
        // An error answer (docs/api.md §5.5) says what went wrong in its first line.
        if (!res.ok) fill(status, describeError(res.status, value));
        return;
      }
      const blob = await res.blob();
      if (type.startsWith('image/')) {
        const img = h('img', { class: 'answer-image', alt: `${type} answer` });
        img.src = blobUrl(blob);
        fill(body, img, h('div', {}, h('a', { href: objectUrl, download: 'answer' }, `download (${blob.size} bytes)`)));
      } else if (type.startsWith('text/')) {
        fill(body, h('pre', { class: 'text' }, await blob.text()));
      } else {
        fill(body, h('a', { href: blobUrl(blob), download: 'answer' }, `${blob.size} bytes of ${type || 'unknown type'}: download`));
      }
    },
  };
}

/** Reads a streamed answer as it comes: NDJSON and SSE items one per row, text appended, other bytes counted. */
async function showStream(res: Response, type: string, body: HTMLElement, summary: (text: string) => void): Promise<void> {
  summary('streaming');
  const counter = h('div', { class: 'stream-count' }, 'waiting for the first item…');
  const items = h('ol', { class: 'stream-items' });
  const text = h('pre', { class: 'stream-text' });
  const byRows = type === 'application/x-ndjson' || type === 'text/event-stream';
  const showsText = type.startsWith('text/') && !byRows;
  fill(body, counter, byRows ? items : showsText ? text : null);
  let count = 0;
  let bytes = 0;
  const item = (value: string, failed = false) => {
    count++;
    let shown = value;
    try {
      shown = JSON.stringify(JSON.parse(value));
    } catch {
      // as it came
    }
    append(items, h('li', { class: failed ? 'stream-error' : undefined }, shown));
    while (items.childElementCount > MAX_ITEMS) items.firstElementChild!.remove();
  };
  const parse = type === 'text/event-stream' ? sseParser(item) : type === 'application/x-ndjson' ? lineParser(item) : undefined;
  const decoder = new TextDecoder();
  const reader = res.body!.getReader();
  let outcome = 'ended';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      bytes += value.byteLength;
      if (parse) parse(decoder.decode(value, { stream: true }));
      else if (showsText) {
        text.textContent = (text.textContent + decoder.decode(value, { stream: true })).slice(-MAX_TEXT);
      }
      fill(counter, parse ? `${count} item(s), ${bytes} bytes` : `${bytes} bytes`);
    }
    parse?.('\n\n');
  } catch (e) {
    // An abort (Stop) or a stream cut short by rt (an error after the headers went out).
    outcome = (e as Error).name === 'AbortError' ? 'stopped' : `cut short (${(e as Error).message})`;
  }
  fill(counter, `${parse ? `${count} item(s), ` : ''}${bytes} bytes · ${outcome}`);
  summary(`stream ${outcome}`);
}

function lineParser(item: (value: string) => void): (chunk: string) => void {
  let pending = '';
  return (chunk) => {
    pending += chunk;
    const lines = pending.split('\n');
    pending = lines.pop()!;
    for (const line of lines) if (line.trim()) item(line);
  };
}

/** Server-Sent Events: `data:` lines make an item; `event: error` marks the failure rt sends before ending a broken stream. */
function sseParser(item: (value: string, failed?: boolean) => void): (chunk: string) => void {
  let pending = '';
  return (chunk) => {
    pending += chunk.replaceAll('\r\n', '\n');
    const events = pending.split('\n\n');
    pending = events.pop()!;
    for (const event of events) {
      let name = 'message';
      const data: string[] = [];
      for (const line of event.split('\n')) {
        if (line.startsWith('event:')) name = line.slice(6).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
      }
      if (data.length > 0) item(data.join('\n'), name === 'error');
    }
  };
}
