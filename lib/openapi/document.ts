// The OpenAPI 3.1 document of the whole API (docs/api.md §5): rt's own
// operations (api-paths.ts) and those of the services it serves
// (service-paths.ts), with the schemas and security scheme they share
// (components.ts), and a `servers` entry per request (servers.ts).

import type { ServiceDescriptor } from '../service.js';
import { apiPaths, API_TAGS } from './api-paths.js';
import { SCHEMAS, SECURITY_SCHEMES } from './components.js';
import { servicePaths } from './service-paths.js';

export interface DocumentOptions {
  /** rt's version: the document's. */
  version: string;
  /** Whether `http.control.token` is set: then the control operations ask for it (docs/api.md §5.6). */
  token: boolean;
}

/** The document without `servers`, which depend on the request (withServers). */
export function openApiDocument(services: readonly ServiceDescriptor[], { version, token }: DocumentOptions): Record<string, unknown> {
  const own = servicePaths(services, token);
  const paths = { ...apiPaths(token), ...own.paths };
  return {
    openapi: '3.1.0',
    info: {
      title: 'rt',
      version,
      description:
        "rt's API (docs/api.md §5): its control operations, listing, health and metrics, and the WebAssembly components it serves: their methods, resources and handles, and HTTP handlers. Every failure answers the error body (`Error`), and every answer carries `X-Request-Id`.",
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
    },
    tags: [...API_TAGS, ...own.tags],
    paths,
    components: { schemas: used(SCHEMAS, paths), ...(token ? { securitySchemes: SECURITY_SCHEMES } : {}) },
  };
}

/**
 * The schemas `paths` refer to, and those they refer to in turn: a schema
 * no operation uses (the handles' without resources) would be noise, and a
 * linter's warning.
 */
function used(schemas: Record<string, unknown>, paths: unknown): Record<string, unknown> {
  const names = new Set<string>();
  const visit = (value: unknown) => {
    for (const [, name] of JSON.stringify(value).matchAll(/"#\/components\/schemas\/([^"]+)"/g)) {
      if (names.has(name)) continue;
      names.add(name);
      visit(schemas[name]);
    }
  };
  visit(paths);
  return Object.fromEntries(Object.entries(schemas).filter(([name]) => names.has(name)));
}

/** A document's JSON, in two parts that `servers` go between: what is the same for every request, serialized once. */
export interface SerializedDocument {
  readonly head: string;
  readonly rest: string;
}

export function serialize(document: Record<string, unknown>): SerializedDocument {
  const { openapi, info, ...rest } = document;
  return { head: JSON.stringify({ openapi, info }).slice(0, -1), rest: JSON.stringify(rest).slice(1) };
}

/** The document's JSON with `servers`: the one rt the request reached (servers.ts: serverUrl). */
export function withServers({ head, rest }: SerializedDocument, url: string): string {
  const servers = JSON.stringify([{ url, description: 'This rt, as the request for this document reached it' }]);
  return `${head},"servers":${servers}${rest === '}' ? '}' : `,${rest}`}`;
}
