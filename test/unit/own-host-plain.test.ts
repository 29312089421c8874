// Components of plain (synchronous) functions that import nothing, on rt's
// own host (instance-spec.ts ownHosting, own-host.ts): rt calls their core
// exports itself, past jco's glue and the task it makes per call. In process,
// as a worker makes their instances; each answer checked against jco's glue
// running the same component, so that the two hosts cannot disagree.

import { expect } from 'chai';
import type { ComponentSource } from '../../examples/builder.js';
import { examples } from '../../examples/index.js';
import { compileCoreModules } from '../../lib/worker/execution/compile-core-modules.js';
import { ComponentInstance, type CallOutcome } from '../../lib/worker/execution/component-instance.js';
import { instanceSpec, ownHosting } from '../../lib/worker/execution/instance-spec.js';
import { serviceName, type ServiceDescriptor } from '../../lib/service.js';
import { catalog } from '../support/hosting.js';
import { BYTES, FAULTY, RUNAWAY, TRAPPING_INIT } from '../support/fixtures.js';

const CAP = 64 << 20;

async function descriptor(name: string, source: ComponentSource): Promise<ServiceDescriptor> {
  const { services, failures } = await catalog({ [name]: source });
  expect(failures).to.deep.equal([]);
  return services[0];
}

async function example(name: string): Promise<ComponentSource> {
  return examples.find((e) => e.name === name)!.source();
}

/** `d` with `config` as its configuration (what init gets). */
function configured(d: ServiceDescriptor, config: string): ServiceDescriptor {
  return { ...d, config: { bytes: new TextEncoder().encode(config), contentType: 'application/json', origin: 'test', entries: [] } };
}

/** An instance of `d` on rt's own host where it serves it, or (`glue`) on jco's. */
async function instance(d: ServiceDescriptor, glue = false): Promise<ComponentInstance> {
  const spec = instanceSpec(d, await compileCoreModules(d.artifact, CAP, 'plain'), CAP);
  return ComponentInstance.create(glue ? { ...spec, own: undefined } : spec);
}

/** Why making an instance failed. */
async function refused(made: Promise<ComponentInstance>): Promise<string> {
  try {
    await made;
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error('expected the instance to fail');
}

function call(d: ServiceDescriptor, on: ComponentInstance, name: string, args: unknown[]): CallOutcome {
  return on.call(d.methods.findIndex((m) => m.name === name), args);
}

describe("rt's own host: plain functions of a component that imports nothing (in process, against jco's glue)", function () {
  this.timeout(180_000);
  let greeter: ServiceDescriptor;
  let bytes: ServiceDescriptor;

  before(async () => {
    greeter = configured(await descriptor('greeter', await example('greeter')), '{"greeting":"Grüezi"}');
    bytes = await descriptor('bytes', BYTES);
  });

  it('serves the componentize-js greeter and a WAT component on its own host, and jco’s glue the same components when asked', async () => {
    for (const d of [greeter, bytes]) {
      expect((await instance(d)).host, serviceName(d.id)).to.equal('rt');
      expect((await instance(d, true)).host, serviceName(d.id)).to.equal('jco');
    }
  });

  it('runs init with the configuration, then strings and records in and out, as the glue does', async () => {
    const [own, glue] = [await instance(greeter), await instance(greeter, true)];
    for (const name of ['Wörld 🌍', '', 'x'.repeat(10_000)]) {
      const mine = call(greeter, own, 'greet', [name]);
      expect(mine).to.deep.equal({ kind: 'ok', value: `Grüezi, ${name}!` });
      expect(mine).to.deep.equal(call(greeter, glue, 'greet', [name]));
    }
    const person = { name: 'Ada', age: 1 };
    expect(call(greeter, own, 'greet-person', [person])).to.deep.equal({ kind: 'ok', value: 'Grüezi, Ada! You are 1 year old.' });
    expect(call(greeter, own, 'greet-person', [person])).to.deep.equal(call(greeter, glue, 'greet-person', [person]));
  });

  it('fails the instance whose init returns an error, with the error the glue gives', async () => {
    const refusing = configured(greeter, '{"greeting":5}');
    const message = await refused(instance(refusing));
    expect(message).to.equal('init returned an error: the configuration needs a "greeting" string');
    expect(await refused(instance(refusing, true))).to.equal(message);
  });

  it('fails the instance whose init traps, as the glue does', async () => {
    const trapping = await descriptor('trapping-init', TRAPPING_INIT);
    expect(ownHosting(trapping).own).to.not.equal(undefined);
    const message = await refused(instance(trapping));
    expect(message).to.match(/^init trapped: /);
    expect(await refused(instance(trapping, true))).to.equal(message);
  });

  it('lowers a list<u8> through the guest’s realloc and runs its post-return after each result', async () => {
    const [own, glue] = [await instance(bytes), await instance(bytes, true)];
    const data = Uint8Array.from({ length: 70_000 }, (_, i) => i % 251);
    for (let i = 0; i < 3; i++) {
      const mine = call(bytes, own, 'reverse', [data]);
      expect(mine).to.deep.equal({ kind: 'ok', value: data.slice().reverse() });
      expect(mine).to.deep.equal(call(bytes, glue, 'reverse', [data]));
    }
  });

  it('answers a trap with the memory the instance reached at its cap, and the trapped instance stays trapped, as the glue does', async () => {
    const runaway = await descriptor('runaway', RUNAWAY);
    const [own, glue] = [await instance(runaway), await instance(runaway, true)];
    expect(own.host).to.equal('rt');
    const mine = call(runaway, own, 'bomb', []);
    expect(mine).to.include({ kind: 'trap', code: 'RT_ERR_COMPONENT_TRAPPED' });
    expect((mine as { message: string }).message).to.match(/^wasm trap: wasm `unreachable` instruction executed \(the instance's memory reached 6\d MiB; runtime.max_memory_mb is 64\)$/);
    expect(mine).to.deep.equal(call(runaway, glue, 'bomb', []));
    expect(call(runaway, own, 'count', [])).to.include({ kind: 'trap' });
    expect(call(runaway, glue, 'count', [])).to.include({ kind: 'trap' });
  });

  it('passes floats, and answers a trap in the glue’s words: the WAT calculator', async () => {
    const calculator = await descriptor('calculator', await example('calculator'));
    const [own, glue] = [await instance(calculator), await instance(calculator, true)];
    expect(own.host).to.equal('rt');
    for (const [name, args] of [['add', [20, 22]], ['subtract', [-5, 2_147_483_647]], ['square-root', [2]], ['square-root', [-1]], ['divide', [7, 2]]] as const) {
      const mine = call(calculator, own, name, [...args]);
      expect(mine, name).to.deep.equal(call(calculator, glue, name, [...args]));
      expect(mine.kind, name).to.equal('ok');
    }
    expect(call(calculator, own, 'square-root', [2])).to.deep.equal({ kind: 'ok', value: Math.SQRT2 });
    const trap = call(calculator, own, 'divide', [1, 0]);
    expect(trap).to.deep.equal({ kind: 'trap', code: 'RT_ERR_COMPONENT_TRAPPED', message: 'wasm trap: integer divide by zero' });
    expect(trap).to.deep.equal(call(calculator, glue, 'divide', [1, 0]));
  });

  it('leaves a component that imports anything to jco’s glue', async () => {
    const faulty = await descriptor('faulty', FAULTY);
    expect(ownHosting(faulty)).to.deep.equal({});
    expect((await instance(faulty)).host).to.equal('jco');
  });
});
