// Finding the service and method a path names, with their error answers (docs/api.md §5.5)
// when there is none: 404 naming what is known, or 503 while this worker is
// still loading (its set is not yet the primary's).

import { ApiError, type ErrorContext } from '../../errors.js';
import { serviceName } from '../../service.js';
import type { HostedService } from '../execution/hosted-service.js';
import type { Method } from '../execution/method.js';
import type { ServiceRegistry } from '../execution/registry.js';
import type { WorkerState } from './worker-state.js';
import type { ApiCall } from './api-call.js';

export function findService(registry: ServiceRegistry, state: WorkerState, domain: string, service: string): HostedService {
  const hosted = registry.get(domain, service);
  if (hosted) return hosted;
  const named = pathNames({ domain, service });
  if (!state.loaded) throw new ApiError('RT_ERR_NOT_READY', 'this worker is still loading the components', named);
  throw new ApiError('RT_ERR_UNKNOWN_SERVICE', `no service ${named.service} is loaded`, named);
}

/** The service `id` names (by default the path's `:domain` and `:service`), noted on the request's state: its log line, metrics and error bodies name it. */
export function serviceFor({ registry, state }: { registry: ServiceRegistry; state: WorkerState }, call: ApiCall, id?: { domain: string; service: string }): HostedService {
  const { domain, service } = id ?? call.params;
  const hosted = findService(registry, state, domain, service);
  call.state.service = hosted.name;
  return hosted;
}

export function findMethod(hosted: HostedService, name: string): { hosted: HostedService; method: Method } {
  const method = hosted.method(name);
  if (method) return { hosted, method };
  const known = hosted.descriptor.methods.map((m) => m.name).join(', ');
  throw new ApiError('RT_ERR_UNKNOWN_METHOD', `${hosted.name} has no method "${name}" (methods: ${known})`, { service: hosted.name, method: name });
}

/** The service and method a path names, as error bodies name them (docs/api.md §5.5: even when they do not exist). */
export function pathNames({ domain, service, method }: { domain?: string | undefined; service?: string | undefined; method?: string | undefined }): ErrorContext {
  if (domain === undefined || service === undefined) return {};
  const name = serviceName({ domain, service });
  return method === undefined ? { service: name } : { service: name, method };
}
