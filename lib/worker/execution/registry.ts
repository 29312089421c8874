// The services one worker hosts, by address. `load` replaces the set the
// primary sent; a service whose revision did not change is kept as it is.
// A restart stages a service's new instances beside the serving ones, and
// commits (swaps) or discards them when the primary says.

import { firstLine } from '../../first-line.js';
import { serviceKey, type LoadFailure, type Placement, type ServiceDescriptor, type ServiceId } from '../../service.js';
import { HostedService, type HostingOptions } from './hosted-service.js';

export class ServiceRegistry {
  #services = new Map<string, HostedService>();
  /** New instances of a restarting service, by key, waiting for commit or discard. */
  readonly #staged = new Map<string, HostedService>();
  /** Files the primary skipped plus services this worker could not instantiate: shown in the listing. */
  #failures: LoadFailure[] = [];
  #generation = 0;

  readonly #hosting: HostingOptions;

  constructor(hosting: HostingOptions) {
    // Links are looked up when a call crosses them: the service serving then, whatever was reloaded since.
    this.#hosting = { ...hosting, linked: (id) => this.get(id.domain, id.service) };
  }

  /** Changes whenever the set of services does: what is derived from the set can be cached by it. */
  get generation(): number {
    return this.#generation;
  }

  get(domain: string, service: string): HostedService | undefined {
    return this.#services.get(serviceKey({ domain, service }));
  }

  list(): HostedService[] {
    return [...this.#services.values()];
  }

  failures(): LoadFailure[] {
    return this.#failures;
  }

  /** Where each service served now runs in this worker, by service key (quiesced ones have no placement). */
  placements(): Record<string, Placement> {
    const placements: Record<string, Placement> = {};
    for (const [key, hosted] of this.#services) if (hosted.placement) placements[key] = hosted.placement;
    return placements;
  }

  /**
   * Hosts exactly `descriptors`; returns the ones that failed to instantiate
   * here. A service that fails keeps serving the version it had, if any.
   */
  async load(descriptors: ServiceDescriptor[], skipped: LoadFailure[]): Promise<LoadFailure[]> {
    const next = new Map<string, HostedService>();
    const failures: LoadFailure[] = [];
    await Promise.all(
      descriptors.map(async (descriptor) => {
        const key = serviceKey(descriptor.id);
        const current = this.#services.get(key);
        if (current && current.descriptor.revision === descriptor.revision) {
          next.set(key, current);
          return;
        }
        try {
          next.set(key, await HostedService.start(descriptor, this.#hosting));
        } catch (e) {
          failures.push({ source: descriptor.source, error: `failed to instantiate: ${firstLine(e)}` });
          if (current) next.set(key, current);
        }
      }),
    );
    this.#swap(next);
    this.#failures = [...skipped, ...failures];
    return failures;
  }

  /** Starts new instances of a service aside; the error when they cannot be created. */
  async stage(descriptor: ServiceDescriptor): Promise<string | undefined> {
    const key = serviceKey(descriptor.id);
    await this.discard(descriptor.id); // a leftover from a restart whose outcome never came
    try {
      this.#staged.set(key, await HostedService.start(descriptor, this.#hosting));
      return undefined;
    } catch (e) {
      return firstLine(e);
    }
  }

  /** Serves the staged instances of `id`; the replaced ones finish their calls, then end. */
  commit(id: ServiceId): void {
    const key = serviceKey(id);
    const staged = this.#staged.get(key);
    if (!staged) return;
    this.#staged.delete(key);
    this.#swap(new Map([...this.#services, [key, staged]]));
  }

  discard(id: ServiceId): Promise<void> {
    const key = serviceKey(id);
    const staged = this.#staged.get(key);
    this.#staged.delete(key);
    return staged?.close() ?? Promise.resolve();
  }

  /** Resolves once the service's running calls have finished and its instances are gone. */
  async quiesce(id: ServiceId): Promise<void> {
    await this.#services.get(serviceKey(id))?.quiesce();
  }

  /** Serves nothing from now on: every service drains (its running calls finish) and its instances end. */
  async close(): Promise<void> {
    const all = [...this.#services.values(), ...this.#staged.values()];
    this.#services = new Map();
    this.#staged.clear();
    this.#generation++;
    await Promise.all(all.map((hosted) => hosted.drain()));
  }

  /** Serves `next` from now on; services no longer in it end once their running calls finish. */
  #swap(next: Map<string, HostedService>): void {
    const dropped = [...this.#services].filter(([key, hosted]) => next.get(key) !== hosted);
    this.#services = next;
    this.#generation++;
    for (const [, hosted] of dropped) void hosted.drain();
  }
}
