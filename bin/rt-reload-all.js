#!/usr/bin/env node
// rt-reload-all: POST /api/reload to every replica of rt, and report per pod.
//
// A reload reaches every worker of the one rt that receives it, but a
// Kubernetes Service hands it to a single pod: this sends it to each pod's own
// address. Plain Node (no dependencies), so that it also runs inside an rt pod
// (`kubectl exec`), where the pod addresses are reachable.
//
//   rt-reload-all --targets 10.0.0.5:9481,10.0.0.6:9481
//   kubectl get endpointslices -l kubernetes.io/service-name=rt -o json | rt-reload-all --endpoints -
//   rt-reload-all --service rt        (in a pod whose service account may list endpointslices)
//
// The control token (http.control.token) comes from RT_CONTROL_TOKEN, else
// from RT__HTTP__CONTROL__TOKEN (set in an rt pod), and is sent as
// `Authorization: Bearer <token>`. Exit codes: 0 every pod reloaded
// and serves every component; 1 a pod could not be reloaded; 2 bad usage or
// no pod addresses; 3 every pod reloaded, but components failed to load.

import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

const USAGE = `usage: rt-reload-all (--targets HOST:PORT,... | --endpoints FILE|- | --service NAME) [options]

Where the pods are (one of):
  --targets LIST        comma-separated HOST:PORT or http(s)://HOST:PORT
  --endpoints FILE      JSON from \`kubectl get endpointslices -l kubernetes.io/service-name=NAME -o json\`
                        or \`kubectl get endpoints NAME -o json\`; - reads it from stdin
  --service NAME        in a pod: the EndpointSlices of Service NAME from the Kubernetes API,
                        with the pod's service account (it needs list on endpointslices)
Options:
  --namespace NS        with --service (default: the pod's own namespace)
  --port PORT           the port to call (default: the endpoint port named http, or its only port)
  --timeout SECONDS     per pod (default 120; a reload transpiles new components, ~10 s each)
  --concurrency N       pods reloaded at once (default: all)
  --json                print the report as JSON
  --api-server URL      with --service (default: https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT)
  --service-account-dir DIR  with --service (default: /var/run/secrets/kubernetes.io/serviceaccount)
  --help                this text
Environment:
  RT_CONTROL_TOKEN      sent as Authorization: Bearer <token> (rt's http.control.token);
                        default: RT__HTTP__CONTROL__TOKEN, which an rt pod has`;

class UsageError extends Error {}

/** A pod to reload: where it answers, and its name when Kubernetes gave one. */
function target(url, pod) {
  return { url: url.replace(/\/+$/, ''), ...(pod ? { pod } : {}) };
}

function fromList(list) {
  const targets = list.split(',').map((s) => s.trim()).filter(Boolean).map((t) => target(/^https?:\/\//.test(t) ? t : `http://${t}`));
  if (targets.length === 0) throw new UsageError('--targets: no address given');
  return targets;
}

/** The port of an endpoint: --port, else the one named http, else the only one. */
function portOf(ports, wanted, where) {
  if (wanted) return wanted;
  const http = ports.find((p) => p.name === 'http') ?? (ports.length === 1 ? ports[0] : undefined);
  if (!http?.port) throw new UsageError(`${where}: no port named "http" and not exactly one port: give --port`);
  return http.port;
}

const hostPort = (ip, port) => (ip.includes(':') ? `[${ip}]:${port}` : `${ip}:${port}`);

/**
 * The ready pod addresses in an EndpointSlice list or an Endpoints object (as
 * kubectl prints them); pods that are not ready are returned apart: they load
 * the repositories as they start.
 */
function fromKubernetes(doc, port) {
  const ready = [];
  const notReady = [];
  const slices = doc.kind === 'Endpoints' ? null : doc.kind === 'EndpointSlice' ? [doc] : Array.isArray(doc.items) ? doc.items : undefined;
  if (slices === undefined) throw new UsageError(`--endpoints: expected an EndpointSlice list or an Endpoints object, got kind ${JSON.stringify(doc.kind)}`);
  if (slices) {
    for (const slice of slices) {
      for (const endpoint of slice.endpoints ?? []) {
        const p = portOf(slice.ports ?? [], port, `EndpointSlice ${slice.metadata?.name}`);
        for (const ip of endpoint.addresses ?? []) {
          (endpoint.conditions?.ready === false ? notReady : ready).push(target(`http://${hostPort(ip, p)}`, endpoint.targetRef?.name));
        }
      }
    }
  } else {
    for (const subset of doc.subsets ?? []) {
      const p = portOf(subset.ports ?? [], port, `Endpoints ${doc.metadata?.name}`);
      for (const a of subset.addresses ?? []) ready.push(target(`http://${hostPort(a.ip, p)}`, a.targetRef?.name));
      for (const a of subset.notReadyAddresses ?? []) notReady.push(target(`http://${hostPort(a.ip, p)}`, a.targetRef?.name));
    }
  }
  return { ready, notReady };
}

function readJson(file) {
  const text = readFileSync(file === '-' ? 0 : file, 'utf8');
  try {
    return JSON.parse(text);
  } catch {
    throw new UsageError(`--endpoints ${file}: not JSON (use kubectl's -o json)`);
  }
}

/**
 * One request through node:http(s) (not fetch: fetch refuses some ports, e.g.
 * 6000, and takes no CA): the status and the body as text.
 */
function send(url, { method = 'GET', headers = {}, ca, timeoutMs }) {
  const { request } = url.startsWith('https:') ? https : http;
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers, ...(ca ? { ca } : {}), timeout: timeoutMs }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`no answer in ${timeoutMs / 1000} s`)));
    req.on('error', reject);
    req.end();
  });
}

/** GET a path of the Kubernetes API with the pod's service account. */
async function kubernetesGet(apiServer, path, accountDir) {
  const token = readFileSync(join(accountDir, 'token'), 'utf8').trim();
  const ca = readFileSync(join(accountDir, 'ca.crt'));
  const res = await send(new URL(path, apiServer).href, { headers: { authorization: `Bearer ${token}`, accept: 'application/json' }, ca, timeoutMs: 30_000 });
  if (res.status !== 200) throw new Error(`Kubernetes API ${path}: ${res.status} ${res.text.slice(0, 300)}`);
  return JSON.parse(res.text);
}

async function fromService(opts, port) {
  const accountDir = opts['service-account-dir'];
  const namespace = opts.namespace ?? readFileSync(join(accountDir, 'namespace'), 'utf8').trim();
  const apiServer = opts['api-server'] ?? (process.env.KUBERNETES_SERVICE_HOST ? `https://${hostPort(process.env.KUBERNETES_SERVICE_HOST, process.env.KUBERNETES_SERVICE_PORT ?? '443')}` : undefined);
  if (!apiServer) throw new UsageError('--service: not in a pod (KUBERNETES_SERVICE_HOST is not set): give --api-server, or use --endpoints');
  const selector = encodeURIComponent(`kubernetes.io/service-name=${opts.service}`);
  const list = await kubernetesGet(apiServer, `/apis/discovery.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/endpointslices?labelSelector=${selector}`, accountDir);
  return fromKubernetes(list, port);
}

/** POST /api/reload to one pod: its answer, or why there was none. */
async function reload(t, token, timeoutMs) {
  try {
    const res = await send(`${t.url}/api/reload`, { method: 'POST', headers: token ? { authorization: `Bearer ${token}` } : {}, timeoutMs });
    let body;
    try {
      body = JSON.parse(res.text);
    } catch {
      body = undefined;
    }
    if (res.status !== 200 || body?.status !== 'reloaded') {
      const why = body?.error ? `${body.error}${body.details ? `: ${body.details}` : ''}` : res.text.slice(0, 300);
      return { ...t, ok: false, status: res.status, error: `answered ${res.status}: ${why}` };
    }
    return { ...t, ok: true, status: 200, added: body.added ?? [], updated: body.updated ?? [], removed: body.removed ?? [], failed: body.failed ?? [] };
  } catch (e) {
    return { ...t, ok: false, error: e instanceof Error ? e.message : String(e) };
  }
}

/** Runs `fn` over `items`, at most `limit` at a time, keeping their order. */
async function pooled(items, limit, fn) {
  const results = new Array(items.length);
  let next = 0;
  const runners = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i]);
    }
  });
  await Promise.all(runners);
  return results;
}

const names = (list) => (list.length ? ` (${list.join(', ')})` : '');

function printReport(results, notReady) {
  for (const r of results) {
    const who = r.pod ? `${r.url} ${r.pod}` : r.url;
    if (!r.ok) {
      console.log(`${who}: FAILED: ${r.error}`);
      continue;
    }
    console.log(
      `${who}: reloaded: added ${r.added.length}${names(r.added)}, updated ${r.updated.length}${names(r.updated)}, ` +
        `removed ${r.removed.length}${names(r.removed)}, failed ${r.failed.length}`,
    );
    for (const f of r.failed) console.log(`  failed to load ${f.source}: ${f.error}`);
  }
  for (const t of notReady) console.log(`${t.pod ? `${t.url} ${t.pod}` : t.url}: skipped: not ready (it loads the repositories as it starts)`);
  const failedPods = results.filter((r) => !r.ok).length;
  console.log(`${results.length} pod(s): ${results.length - failedPods} reloaded, ${failedPods} failed${notReady.length ? `, ${notReady.length} not ready` : ''}`);
}

async function main(argv) {
  const { values: opts } = parseArgs({
    args: argv,
    options: {
      targets: { type: 'string' },
      endpoints: { type: 'string' },
      service: { type: 'string' },
      namespace: { type: 'string' },
      port: { type: 'string' },
      timeout: { type: 'string', default: '120' },
      concurrency: { type: 'string' },
      json: { type: 'boolean', default: false },
      'api-server': { type: 'string' },
      'service-account-dir': { type: 'string', default: '/var/run/secrets/kubernetes.io/serviceaccount' },
      help: { type: 'boolean', default: false },
    },
  });
  if (opts.help) {
    console.log(USAGE);
    return 0;
  }
  const sources = ['targets', 'endpoints', 'service'].filter((k) => opts[k] !== undefined);
  if (sources.length !== 1) throw new UsageError('give exactly one of --targets, --endpoints, --service');
  const number = (name, value, min) => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min) throw new UsageError(`--${name}: expected an integer of at least ${min}, got ${JSON.stringify(value)}`);
    return n;
  };
  const port = opts.port === undefined ? undefined : number('port', opts.port, 1);
  const timeoutMs = number('timeout', opts.timeout, 1) * 1000;

  const { ready, notReady } = opts.targets
    ? { ready: fromList(opts.targets), notReady: [] }
    : opts.endpoints
      ? fromKubernetes(readJson(opts.endpoints), port)
      : await fromService(opts, port);
  if (ready.length === 0) throw new UsageError(`no ready pod address found${notReady.length ? ` (${notReady.length} not ready)` : ''}`);

  const concurrency = opts.concurrency === undefined ? ready.length : number('concurrency', opts.concurrency, 1);
  const results = await pooled(ready, concurrency, (t) => reload(t, process.env.RT_CONTROL_TOKEN ?? process.env.RT__HTTP__CONTROL__TOKEN, timeoutMs));
  const code = results.some((r) => !r.ok) ? 1 : results.some((r) => r.failed.length) ? 3 : 0;
  if (opts.json) console.log(JSON.stringify({ ok: code === 0, pods: results, not_ready: notReady }, null, 2));
  else printReport(results, notReady);
  return code;
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (e) {
  const usage = e instanceof UsageError || e?.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' || e?.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE';
  process.stderr.write(`rt-reload-all: ${e instanceof Error ? e.message : String(e)}\n${usage ? `\n${USAGE}\n` : ''}`);
  process.exitCode = usage ? 2 : 1;
}
