// rt's configuration (docs/api.md §2): the merged result of built-in defaults,
// rt/config.toml, the user config file, --config FILE and RT__ variables.
// Field names are the TOML keys, so files, variables and this type map 1:1.

import { formatTree, type Format } from './format.js';
import { layers, merge, type LoadOptions } from './layers.js';
import type { KeyPath, LogLevel } from './schema.js';
import { nest } from './tree.js';

export { ConfigError } from './errors.js';
export type { LoadOptions } from './layers.js';
export { referenceTable } from './reference.js';

export interface Config {
  repo_urls: string[];
  workers: number;
  http: {
    host: string;
    port: number;
    tls_enable: boolean;
    tls_port: number;
    tls_cert?: string;
    tls_key?: string;
    request_timeout_seconds: number;
    stream_timeout_seconds: number;
    max_body_bytes: number;
    max_connections: number;
    client_share_percent: number;
    min_body_bytes_per_second: number;
    trusted_proxies: string[];
    cors: { enabled: boolean; allowed_origins: string[]; allowed_methods: string[] };
    control: { allowed_origins: string[]; token?: string };
  };
  runtime: { max_memory_mb: number; max_thread_heap_mb: number; heartbeat_timeout_seconds: number };
  repositories: { ca_file?: string; download_timeout_seconds: number; max_download_bytes: number; max_component_mib: number; trusted: string[]; watch: boolean; settle_ms: number; poll_seconds: number };
  log: { level: LogLevel; requests: boolean };
  console: { enabled: boolean };
}

/** Throws ConfigError (one line naming the layer, the key and what was expected) for any bad value. */
export function loadConfig(opts: LoadOptions): Config {
  // Sound because every value was checked against its key's type, and the check below ties the keys to Config.
  return nest(merge(layers(opts))) as unknown as Config;
}

/** The configuration as TOML or JSON that `rt` accepts back as a config file, giving the same configuration. */
export function formatConfig(config: Config, format: Format): string {
  return formatTree(config, format);
}

// Compile-time: Config's fields are exactly the schema's keys. A key added to
// one and not the other fails to compile here.
type Leaves<T, Prefix extends string = ''> = {
  [K in keyof T & string]-?: NonNullable<T[K]> extends string | number | boolean | readonly unknown[]
    ? `${Prefix}${K}`
    : Leaves<NonNullable<T[K]>, `${Prefix}${K}.`>;
}[keyof T & string];
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
true satisfies Same<Leaves<Config>, KeyPath>;
