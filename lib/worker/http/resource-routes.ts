// The routes of resources and their handles (docs/api.md §5.1.2): make one
// (a resource's constructor), call a method on one, drop one, list them.
// Each answers as invoke does (its statuses, errors, request ids): a handle
// call is an invocation with its handle as `self`. A request for a handle
// another worker holds is answered by that worker (peers.ts): before its
// body is read when the path names the handle, after when the body does; a
// constructor is answered by the worker the service's handles live in
// (execution/handle-homes.ts).

import type Router from '@koa/router';
import { ApiError } from '../../errors.js';
import { redactHandleId } from '../execution/handle-ids.js';
import { credentialsOf, handleListing, type ControlPolicy } from './control-guard.js';
import type { HandleJson } from '../../wit/handles.js';
import type { HostedService } from '../execution/hosted-service.js';
import type { Method } from '../execution/method.js';
import { failureError } from './failures.js';
import { answerResult, callOrForward, invocationFor, Invoker, readInput, type InvokeDeps } from './invoke.js';
import { findService } from './lookup.js';
import { cameFromPeer } from './peers.js';
import type { RequestState, RtContext } from './request-state.js';
import type { WorkerState } from './worker-state.js';

type Params = Record<string, string>;

export function resourceRoutes(router: Router<RequestState>, deps: InvokeDeps, policy: ControlPolicy): void {
  const { peers } = deps;
  const invoker = new Invoker(deps);
  const serviceOf = (ctx: RtContext & { params: Params }): HostedService => {
    const hosted = findService(deps.registry, deps.state, ctx.params.domain, ctx.params.service);
    ctx.state.service = hosted.name;
    return hosted;
  };

  /** Makes the invocation of `method` with the request's body: its result, or undefined once another worker answered it. */
  const invoke = async (ctx: RtContext & { params: Params }, hosted: HostedService, method: Method, self?: string) => {
    ctx.state.method = method.descriptor.name;
    const input = await readInput(ctx.req, method, invoker.maxBytes, ctx.state);
    return callOrForward(ctx, peers, hosted, invocationFor(ctx, method, input, self));
  };

  router.post('/services/:domain/:service/resources/:resource', async (ctx) => {
    const hosted = serviceOf(ctx);
    const name = ctx.params.resource;
    const resource = hosted.resource(name);
    const where = { service: hosted.name, method: name };
    if (!resource) throw new ApiError('RT_ERR_UNKNOWN_RESOURCE', `${hosted.name} exports no resource "${name}" (resources: ${hosted.descriptor.resources.map((r) => r.name).join(', ') || 'none'})`, where);
    const constructor = hosted.resourceMethod(resource, null);
    if (!constructor) throw new ApiError('RT_ERR_UNKNOWN_METHOD', `the resource ${resource.name} has no constructor: its handles come from the functions that return one`, where);
    const result = await invoke(ctx, hosted, constructor);
    // Made in the worker where the service's handles live (handle-homes.ts): when that is another, it answered, and the result is undefined.
    if (result === undefined) return;
    const id = result.kind === 'json' ? (result.value as HandleJson | null)?.$handle : undefined;
    if (typeof id !== 'string') throw new ApiError('RT_ERR_INTERNAL', `the constructor of ${resource.name} returned no handle`, where);
    ctx.status = 201;
    ctx.set('Location', `/api/services/${ctx.params.domain}/${ctx.params.service}/handles/${id}`);
    ctx.body = { handle: id };
  });

  router.post('/services/:domain/:service/handles/:handle/invoke/:method', async (ctx) => {
    const hosted = serviceOf(ctx);
    const id = ctx.params.handle;
    const resource = hosted.handleResource(id);
    const where = { service: hosted.name, method: ctx.params.method };
    ctx.state.method = ctx.params.method;
    if ('kind' in resource) {
      if (resource.kind === 'other-worker') return peers.forward(ctx, resource.worker);
      throw failureError(resource, where);
    }
    const method = hosted.resourceMethod(resource, ctx.params.method);
    if (!method) {
      const known = resource.methods.map((i) => hosted.descriptor.methods[i].name).join(', ');
      throw new ApiError('RT_ERR_UNKNOWN_METHOD', `the resource ${resource.name} has no method "${ctx.params.method}" (methods: ${known || 'none'})`, where);
    }
    const result = await invoke(ctx, hosted, method, id);
    if (result) answerResult(ctx, result);
  });

  router.delete('/services/:domain/:service/handles/:handle', async (ctx) => {
    const hosted = serviceOf(ctx);
    const id = ctx.params.handle;
    const where = { service: hosted.name };
    const resource = hosted.handleResource(id);
    if ('kind' in resource) {
      if (resource.kind === 'other-worker') return peers.forward(ctx, resource.worker);
      throw failureError(resource, where);
    }
    const dropped = await hosted.dropHandle(id);
    if (dropped.kind !== 'dropped') throw failureError(dropped, where);
    ctx.status = 204;
  });

  // Every worker's live handles, their ids whole only to the control token (handleListing).
  router.get('/services/:domain/:service/handles', async (ctx) => {
    // Another worker asks for this worker's part, ids whole: the worker the client reached decides what the client sees.
    if (cameFromPeer(ctx.req)) return void (ctx.body = { handles: listedHandles(serviceOf(ctx), deps.state) });
    const access = handleListing(credentialsOf(ctx), policy);
    if ('refusal' in access) throw access.refusal;
    const hosted = serviceOf(ctx);
    const others = (await peers.gather<{ handles: ListedHandle[] }>(ctx.path)).flatMap((answer) => answer.handles);
    const all = [...listedHandles(hosted, deps.state), ...others].sort((a, b) => a.created.localeCompare(b.created));
    ctx.body = { handles: access.whole ? all : all.map((h) => ({ ...h, handle: redactHandleId(h.handle) })) };
  });
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
