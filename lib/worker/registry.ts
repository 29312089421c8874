// The services one worker hosts, by address. `load` replaces the set the
// primary sent; a service whose component did not change is kept as it is.

import { firstLine } from '../primary/compiler.js';
import { serviceKey, type LoadFailure, type ServiceDescriptor } from '../service.js';
import { LoadedComponent } from './component.js';
import { HostedService } from './hosted-service.js';

export class ServiceRegistry {
  #services = new Map<string, HostedService>();
  /** Files the primary skipped plus services this worker could not instantiate: shown in the listing. */
  #failures: LoadFailure[] = [];
  #generation = 0;

  /** Changes whenever the set of services does: what is derived from the set can be cached by it. */
  get generation(): number {
    return this.#generation;
  }

  get(domain: string, service: string): HostedService | undefined {
    return this.#services.get(`${domain}/${service}`);
  }

  list(): HostedService[] {
    return [...this.#services.values()];
  }

  failures(): LoadFailure[] {
    return this.#failures;
  }

  /** Hosts exactly `descriptors`; returns the ones that failed to instantiate here. */
  async load(descriptors: ServiceDescriptor[], skipped: LoadFailure[]): Promise<LoadFailure[]> {
    const next = new Map<string, HostedService>();
    const failures: LoadFailure[] = [];
    await Promise.all(
      descriptors.map(async (descriptor) => {
        const key = serviceKey(descriptor.id);
        const current = this.#services.get(key);
        if (current && current.descriptor.artifact.hash === descriptor.artifact.hash) {
          next.set(key, current);
          return;
        }
        try {
          const component = await LoadedComponent.load(descriptor.artifact, descriptor.interface.imports);
          const hosted = new HostedService(descriptor, component);
          await hosted.warmUp();
          next.set(key, hosted);
        } catch (e) {
          failures.push({ source: descriptor.source, error: `failed to instantiate: ${firstLine(e)}` });
        }
      }),
    );
    this.#services = next;
    this.#failures = [...skipped, ...failures];
    this.#generation++;
    return failures;
  }
}
