// Hosting real components in the test process, as a worker does, without the
// CLI: a repository scanned and transpiled as the primary does
// (lib/primary/catalog.ts), and calls made on a HostedService.

import { expect } from 'chai';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ApiError } from '../../lib/errors.js';
import { createLogger } from '../../lib/log.js';
import { buildCatalog } from '../../lib/primary/catalog.js';
import type { LoadFailure, ServiceDescriptor } from '../../lib/service.js';
import type { HostedService } from '../../lib/worker/execution/hosted-service.js';
import type { Invocation } from '../../lib/worker/execution/invocation.js';
import { succeeded } from '../../lib/worker/http/invoke.js';
import { repository } from './fixtures.js';
import { tempDir } from './rt-process.js';

export const silentLog = createLogger('silent', {});

/** The services (and failures) of a repository made of `entries`. */
export async function catalog(entries: Parameters<typeof repository>[0]): Promise<{ services: ServiceDescriptor[]; failures: LoadFailure[] }> {
  const repo = await repository(entries);
  const cache = await tempDir('rt-hosting-cache-');
  return buildCatalog([pathToFileURL(repo).href], repo, { download: { timeoutMs: 10_000, maxBytes: 1 << 20, cacheRoot: join(cache, 'repositories') }, trusted: [], maxComponentBytes: 256 << 20 }, silentLog);
}

/**
 * Calls `name` with `body` as a JSON body, as the HTTP layer hands it over
 * (a large one is decoded on the instance thread, as it would be), and
 * answers its result; `timeoutMs` from now bounds it. A failure is thrown as
 * the ApiError it answers with (http/failures.ts).
 */
export function invoke(hosted: HostedService, name: string, body: unknown, timeoutMs: number, signal?: AbortSignal): Promise<unknown> {
  return invokeJson(hosted, name, JSON.stringify(body), timeoutMs, signal);
}

/** `invoke`, with the JSON body's text as it is. */
export async function invokeJson(hosted: HostedService, name: string, json: string, timeoutMs: number, signal?: AbortSignal): Promise<unknown> {
  const method = hosted.method(name);
  if (!method) throw new Error(`no method ${name}`);
  const invocation: Invocation = { method, input: { kind: 'json', bytes: Buffer.from(json) }, deadline: performance.now() + timeoutMs, answer: 'json', ...(signal ? { signal } : {}) };
  const route = hosted.involvesHandles(invocation) ? hosted.routeHandleCall(invocation) : undefined;
  if (route?.kind === 'other-worker') throw new Error(`a call routed to worker ${route.worker}: one worker hosts everything here`);
  const result = succeeded(hosted, invocation, route && route.kind !== 'here' ? route : await hosted.invoke(invocation, route));
  return result.kind === 'json' ? result.value : result.bytes;
}

/** The ApiError `promise` is refused with (and a failed test if it is not refused). */
export async function refusal(promise: Promise<unknown>): Promise<ApiError> {
  try {
    await promise;
  } catch (e) {
    expect(e).to.be.instanceOf(ApiError);
    return e as ApiError;
  }
  throw new Error('expected the call to be refused');
}
