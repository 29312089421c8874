// componentize-js builds in a process of their own, for building several
// components at once (index.ts). componentize-js holds its process for all
// of a build: the splice and the wasi stubbing are synchronous wasm calls,
// and the pre-initialization (preinitialize-cli.ts) runs through spawnSync,
// so two builds in one process run one after the other; in processes of
// their own they overlap. A process builds one source after another and is
// kept for the next, which then skips loading componentize-js.

import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { JsSource } from './builder.js';

export type BuildRequest = { id: number; source: JsSource };
export type BuildAnswer = { id: number; ok: true; component: Uint8Array } | { id: number; ok: false; error: string };

export class ComponentizeProcess {
  #child: ChildProcess | undefined;
  #nextId = 0;
  readonly #waiting = new Map<number, { resolve: (bytes: Uint8Array) => void; reject: (e: Error) => void }>();

  /** Builds `source` in the process (started on first use), after whatever it was given before. */
  build(source: JsSource): Promise<Uint8Array> {
    const child = (this.#child ??= this.#start());
    const id = ++this.#nextId;
    return new Promise((resolve, reject) => {
      this.#waiting.set(id, { resolve, reject });
      child.send({ id, source } satisfies BuildRequest);
    });
  }

  /** Lets the process end once it has answered what it was given. */
  close(): void {
    if (this.#child?.connected) this.#child.disconnect();
    this.#child = undefined;
  }

  #start(): ChildProcess {
    const child = fork(fileURLToPath(new URL('./componentize-child.js', import.meta.url)), [], { serialization: 'advanced', stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    child.on('message', (answer: BuildAnswer) => {
      const waiting = this.#waiting.get(answer.id);
      this.#waiting.delete(answer.id);
      if (answer.ok) waiting?.resolve(answer.component);
      else waiting?.reject(new Error(answer.error));
    });
    child.on('exit', (code, signal) => {
      if (this.#child === child) this.#child = undefined;
      for (const { reject } of this.#waiting.values()) reject(new Error(`the componentize-js build process ended (${signal ?? `exit code ${code}`}) before it answered`));
      this.#waiting.clear();
    });
    return child;
  }
}
