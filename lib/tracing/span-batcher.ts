// Ended spans on their way to the collector, as the specification's batch
// span processor sends them (OTEL_BSP_*, settings.ts): a batch as soon as
// one is full, else what waits once the schedule's delay has passed; one
// export at a time; a span that finds the queue full is dropped. Each span's
// fate is counted (rt_trace_spans_total).

import type { TraceSettings } from './settings.js';
import type { SpanRecord } from './span-record.js';
import type { SpanFate } from './traces.js';

/** Sends one batch; true once the collector took it, false when the export failed. */
export type SendBatch = (spans: SpanRecord[]) => Promise<boolean>;

export class SpanBatcher {
  readonly #queue: SpanRecord[] = [];
  #timer: NodeJS.Timeout | undefined;
  #sending: Promise<void> | undefined;

  constructor(
    private readonly bounds: TraceSettings['batch'],
    private readonly send: SendBatch,
    private readonly counted: (fate: SpanFate, spans: number) => void,
  ) {}

  add(span: SpanRecord): void {
    if (this.#queue.length >= this.bounds.maxQueueSize) return this.counted('dropped', 1);
    this.#queue.push(span);
    this.#schedule();
  }

  /** Sends everything queued, batch after batch (the worker is stopping). */
  async flush(): Promise<void> {
    while (this.#sending !== undefined || this.#queue.length > 0) {
      this.#sendNext();
      await this.#sending;
    }
  }

  #sendNext(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#sending !== undefined || this.#queue.length === 0) return;
    const batch = this.#queue.splice(0, this.bounds.maxExportBatchSize);
    this.#sending = this.#exported(batch).then((ok) => {
      this.counted(ok ? 'exported' : 'failed', batch.length);
      this.#sending = undefined;
      this.#schedule();
    });
  }

  /** A full batch goes now; fewer spans wait for the schedule's delay. */
  #schedule(): void {
    if (this.#queue.length >= this.bounds.maxExportBatchSize) this.#sendNext();
    else if (this.#queue.length > 0) this.#timer ??= setTimeout(() => this.#sendNext(), this.bounds.scheduledDelayMillis).unref();
  }

  /** Whether `batch` was exported within the export timeout (past it, the next batch need not wait for a collector that does not answer). */
  #exported(batch: SpanRecord[]): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), this.bounds.exportTimeoutMillis).unref();
    });
    return Promise.race([this.send(batch).catch(() => false), timeout]).finally(() => clearTimeout(timer));
  }
}
