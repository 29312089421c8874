// Where a service's handles live (lib/worker/execution/handle-homes.ts): every
// worker's view agrees on the slot, services spread over the slots, and a
// replacement in a slot takes that slot's services.

import { expect } from 'chai';
import { HandleHomes } from '../../lib/worker/execution/handle-homes.js';

describe('handle homes', () => {
  const services = Array.from({ length: 200 }, (_, i) => `acme.service-${i}`);

  it('gives every service one home, the same in every worker', () => {
    const [here, there] = [new HandleHomes([1, 2, 3, 4]), new HandleHomes([1, 2, 3, 4])];
    for (const service of services) {
      expect(here.home(service), service).to.equal(there.home(service));
      expect(here.home(service)).to.equal(here.home(service, ''));
      expect([1, 2, 3, 4]).to.include(here.home(service));
    }
  });

  it('spreads services over the slots', () => {
    const homes = new HandleHomes([1, 2, 3, 4]);
    const counts = new Map<number, number>();
    for (const service of services) counts.set(homes.home(service)!, (counts.get(homes.home(service)!) ?? 0) + 1);
    expect([...counts.keys()].sort()).to.deep.equal([1, 2, 3, 4]);
    for (const count of counts.values()) expect(count, 'about 50 each').to.be.within(25, 75);
  });

  it("puts a replacement in the slot of the worker it replaces: that slot's services move to it, the others stay", () => {
    const homes = new HandleHomes([1, 2]);
    const before = new Map(services.map((s) => [s, homes.home(s)]));
    homes.update([3, 2]);
    for (const service of services) expect(homes.home(service), service).to.equal(before.get(service) === 1 ? 3 : 2);
  });

  it('names no home while its slot has no worker', () => {
    const homes = new HandleHomes([0, 0]);
    expect(homes.home('acme.counters')).to.equal(undefined);
    expect(new HandleHomes([]).home('acme.counters')).to.equal(undefined);
  });
});
