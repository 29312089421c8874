// The operations of resources and their handles (docs/api.md §5.1.2): make
// one (a resource's constructor), call a method on one, drop one, list them.
// Each answers as invoke does (its statuses, errors, request ids): a handle
// call is an invocation with its handle as `self`. A request for a handle
// another worker holds is answered by that worker (peers.ts): before its
// body is read when the path names the handle, after when the body does; a
// constructor is answered by the worker the service's handles live in
// (execution/handle-homes.ts).

import { ApiError } from '../../errors.js';
import { redactHandleId } from '../execution/handle-ids.js';
import { credentialsOf, handleListing, type ControlPolicy } from './control-guard.js';
import type { HandleJson } from '../../wit/handles.js';
import type { ResourceDescriptor } from '../../service.js';
import type { HostedService } from '../execution/hosted-service.js';
import type { Method } from '../execution/method.js';
import { failureError } from './failures.js';
import { answerOf, callOrForward, invocationFor, readInput, readWhole, type Called, type InvokeDeps } from './invoke.js';
import { serviceFor } from './lookup.js';
import { cameFromPeer } from './peers.js';
import type { WorkerState } from './worker-state.js';
import { json, type ApiCall, type ApiOperation } from './api-call.js';

export function resourceOperations(deps: InvokeDeps, policy: ControlPolicy): ApiOperation[] {
  const { peers, bodies } = deps;

  /** Makes the invocation of `method` with the request's body. */
  const invoke = async (call: ApiCall, hosted: HostedService, method: Method, self?: string): Promise<Called> => {
    call.state.method = method.descriptor.name;
    const input = await readInput(call.req, method, bodies, call.state);
    return callOrForward(call, peers, hosted, invocationFor(call, method, input, self));
  };

  const make: ApiOperation = {
    name: 'make-handle',
    method: 'POST',
    path: '/services/:domain/:service/resources/:resource',
    run: async (call) => {
      const hosted = serviceFor(deps, call);
      const name = call.params.resource;
      const resource = hosted.resource(name);
      const where = { service: hosted.name, method: name };
      if (!resource) throw new ApiError('RT_ERR_UNKNOWN_RESOURCE', `${hosted.name} exports no resource "${name}" (resources: ${hosted.descriptor.resources.map((r) => r.name).join(', ') || 'none'})`, where);
      const constructor = hosted.resourceMethod(resource, null);
      if (!constructor) throw new ApiError('RT_ERR_UNKNOWN_METHOD', `the resource ${resource.name} has no constructor: its handles come from the functions that return one`, where);
      const called = await invoke(call, hosted, constructor);
      // Made in the worker where the service's handles live (handle-homes.ts): that one's answer, when it is another.
      if ('relayed' in called) return called.relayed;
      const id = called.result.kind === 'json' ? (called.result.value as HandleJson | null)?.$handle : undefined;
      if (typeof id !== 'string') throw new ApiError('RT_ERR_INTERNAL', `the constructor of ${resource.name} returned no handle`, where);
      return json({ handle: id }, 201, { Location: `/api/services/${call.params.domain}/${call.params.service}/handles/${id}` });
    },
  };

  const callHandle: ApiOperation = {
    name: 'call-handle',
    method: 'POST',
    path: '/services/:domain/:service/handles/:handle/invoke/:method',
    run: async (call) => {
      const hosted = serviceFor(deps, call);
      const id = call.params.handle;
      const where = { service: hosted.name, method: call.params.method };
      call.state.method = call.params.method;
      const resource = heldHere(hosted, id, where);
      if ('worker' in resource) return peers.forward(call, resource.worker, await readWhole(call.req, bodies, call.state));
      const method = hosted.resourceMethod(resource, call.params.method);
      if (!method) {
        const known = resource.methods.map((i) => hosted.descriptor.methods[i].name).join(', ');
        throw new ApiError('RT_ERR_UNKNOWN_METHOD', `the resource ${resource.name} has no method "${call.params.method}" (methods: ${known || 'none'})`, where);
      }
      return answerOf(await invoke(call, hosted, method, id));
    },
  };

  const drop: ApiOperation = {
    name: 'drop-handle',
    method: 'DELETE',
    path: '/services/:domain/:service/handles/:handle',
    run: async (call) => {
      const hosted = serviceFor(deps, call);
      const id = call.params.handle;
      const where = { service: hosted.name };
      const resource = heldHere(hosted, id, where);
      if ('worker' in resource) return peers.forward(call, resource.worker, await readWhole(call.req, bodies, call.state));
      const dropped = await hosted.dropHandle(id);
      if (dropped.kind !== 'dropped') throw failureError(dropped, where);
      return { kind: 'empty', status: 204 };
    },
  };

  // Every worker's live handles, their ids whole only to the control token (handleListing).
  const list: ApiOperation = {
    name: 'list-handles',
    method: 'GET',
    path: '/services/:domain/:service/handles',
    run: async (call) => {
      // Another worker asks for this worker's part, ids whole: the worker the client reached decides what the client sees.
      if (cameFromPeer(call.req)) return json({ handles: listedHandles(serviceFor(deps, call), deps.state) });
      const access = handleListing(credentialsOf(call), policy);
      if ('refusal' in access) throw access.refusal;
      const hosted = serviceFor(deps, call);
      const others = (await peers.gather<{ handles: ListedHandle[] }>((call.req.url ?? '').split('?')[0])).flatMap((answer) => answer.handles);
      const all = [...listedHandles(hosted, deps.state), ...others].sort((a, b) => a.created.localeCompare(b.created));
      return json({ handles: access.whole ? all : all.map((h) => ({ ...h, handle: redactHandleId(h.handle) })) });
    },
  };

  return [make, callHandle, drop, list];
}

/** The resource of handle `id` when this worker holds it, or the worker that does; a handle that is not live answers with its failure. */
function heldHere(hosted: HostedService, id: string, where: { service: string; method?: string }): ResourceDescriptor | { worker: number } {
  const resource = hosted.handleResource(id);
  if (!('kind' in resource)) return resource;
  if (resource.kind === 'other-worker') return { worker: resource.worker };
  throw failureError(resource, where);
}

/** A live handle as GET .../handles lists it. */
interface ListedHandle {
  handle: string;
  resource: string;
  scope: string;
  worker: number;
  created: string;
  last_used: string;
  expires: string;
}

/** This worker's live handles of `hosted`, as GET .../handles lists them. */
function listedHandles(hosted: HostedService, state: WorkerState): ListedHandle[] {
  const iso = (ms: number) => new Date(ms).toISOString();
  return hosted.handles().map((h) => ({ handle: h.id, resource: h.resource, scope: h.scope, worker: state.workerId, created: iso(h.created), last_used: iso(h.lastUsed), expires: iso(h.expires) }));
}
