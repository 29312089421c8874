// The services one worker hosts, by address. `load` replaces the set the
// primary sent; a service whose component did not change is kept as it is.

import { firstLine } from '../primary/compiler.js';
import { serviceKey, type LoadFailure, type ServiceDescriptor } from '../service.js';
import { HostedService, type HostingOptions } from './hosted-service.js';

export class ServiceRegistry {
  #services = new Map<string, HostedService>();
  /** Files the primary skipped plus services this worker could not instantiate: shown in the listing. */
  #failures: LoadFailure[] = [];
  #generation = 0;

  constructor(private readonly hosting: HostingOptions) {}

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
          next.set(key, await HostedService.start(descriptor, this.hosting));
        } catch (e) {
          failures.push({ source: descriptor.source, error: `failed to instantiate: ${firstLine(e)}` });
        }
      }),
    );
    const dropped = [...this.#services].filter(([key, hosted]) => next.get(key) !== hosted);
    this.#services = next;
    // Calls already running on a replaced service finish first; none can start on it any more.
    await Promise.all(dropped.map(([, hosted]) => hosted.stop()));
    this.#failures = [...skipped, ...failures];
    this.#generation++;
    return failures;
  }
}
