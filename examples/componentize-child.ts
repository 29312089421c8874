// The entry point of a build process (componentize-process.ts): builds each
// source it is sent, one after another, and answers each; it ends when its
// parent disconnects.

import { componentizeSource } from './componentize.js';
import type { BuildAnswer, BuildRequest } from './componentize-process.js';

const send = process.send?.bind(process);
if (!send) throw new Error('componentize-child.js is a build process started by componentize-process.ts');

let queue = Promise.resolve();
process.on('message', ({ id, source }: BuildRequest) => {
  queue = queue.then(() =>
    componentizeSource(source).then(
      (component) => void send({ id, ok: true, component } satisfies BuildAnswer),
      // componentize-js's messages can be several lines, all of use.
      (e: unknown) => void send({ id, ok: false, error: e instanceof Error ? e.message : String(e) } satisfies BuildAnswer),
    ),
  );
});
