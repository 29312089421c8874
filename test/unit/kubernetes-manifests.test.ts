// examples/kubernetes/*.yaml, checked without a cluster: every object against
// the Kubernetes API schemas (kubernetes-models: the official OpenAPI schemas
// of Kubernetes 1.27, compiled), with no field the API does not know (kubectl
// rejects those; the schemas alone allow them), and against what rt needs:
// its probe paths, a grace period that outlasts its drain, workers matching
// the CPU limit, the image's volumes, settings rt accepts.

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { Deployment } from 'kubernetes-models/apps/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { ConfigMap, Service } from 'kubernetes-models/v1';
import { parseAllDocuments } from 'yaml';
import { loadConfig } from '../../lib/config/index.js';
import { envOf, parseDockerfile } from '../support/dockerfile.js';
import { traceSettings } from '../../lib/tracing/settings.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const DIR = join(ROOT, 'examples', 'kubernetes');

/** The kinds the examples use, each with its schema validation (which throws a message naming every violation). */
const MODELS: Record<string, { prototype: { validate(): void } }> = {
  'v1/ConfigMap': ConfigMap,
  'v1/Service': Service,
  'apps/v1/Deployment': Deployment,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
};

type Manifest = { apiVersion?: string; kind?: string; [key: string]: unknown };

/**
 * What is wrong with `doc`: schema violations, and fields unknown to the API.
 * The compiled validators read every property their schema declares, and only
 * those: a field the validation never read is one the schema does not know.
 */
function problems(doc: Manifest): string[] {
  const model = MODELS[`${doc.apiVersion}/${doc.kind}`];
  if (!model) return [`no schema for ${doc.apiVersion}/${doc.kind}: not a kind these examples use`];
  const read = new Set<string>();
  const at = (parent: object, path: string, key: string) => (Array.isArray(parent) ? `${path}[${key}]` : `${path}.${key}`);
  const watch = (value: unknown, path: string): unknown =>
    value === null || typeof value !== 'object'
      ? value
      : new Proxy(value, {
          get(target, key, receiver) {
            const v: unknown = Reflect.get(target, key, receiver);
            if (typeof key !== 'string') return v;
            read.add(at(target, path, key));
            return watch(v, at(target, path, key));
          },
        });
  const found: string[] = [];
  try {
    model.prototype.validate.call(watch(doc, ''));
  } catch (e) {
    found.push((e as Error).message);
  }
  const unknown = (value: unknown, path: string): void => {
    if (value === null || typeof value !== 'object') return;
    for (const [key, v] of Object.entries(value)) {
      const p = at(value, path, key);
      if (!Array.isArray(value) && !read.has(p)) found.push(`${p}: unknown field`);
      else unknown(v, p);
    }
  };
  unknown(doc, '');
  return found;
}

function manifests(): { file: string; doc: Manifest }[] {
  return readdirSync(DIR)
    .filter((f) => /\.ya?ml$/.test(f))
    .sort()
    .flatMap((file) =>
      parseAllDocuments(readFileSync(join(DIR, file), 'utf8')).map((d) => {
        if (d.errors.length) throw new Error(`${file}: ${d.errors.map((e) => e.message).join('; ')}`);
        return { file, doc: d.toJS() as Manifest };
      }),
    );
}

function only<T extends Manifest>(kind: string): T {
  const all = manifests().filter((m) => m.doc.kind === kind);
  expect(all, kind).to.have.length(1);
  return all[0].doc as T;
}

interface Container {
  name: string;
  ports: { name: string; containerPort: number }[];
  readinessProbe: { httpGet: { path: string; port: string } };
  livenessProbe: { httpGet: { path: string; port: string } };
  lifecycle: { preStop: { exec: { command: string[] } } };
  resources: { limits: { cpu: string } };
  securityContext: { readOnlyRootFilesystem: boolean; allowPrivilegeEscalation: boolean };
  volumeMounts: { name: string; mountPath: string }[];
  envFrom: { configMapRef: { name: string } }[];
}

interface DeploymentDoc extends Manifest {
  spec: { template: { metadata: { labels: Record<string, string> }; spec: { terminationGracePeriodSeconds: number; securityContext: { runAsNonRoot: boolean }; containers: Container[] } } };
}

const deployment = () => only<DeploymentDoc>('Deployment');
const container = () => deployment().spec.template.spec.containers[0];
const settings = () => only<Manifest & { metadata: { name: string }; data: Record<string, string> }>('ConfigMap');

describe('Kubernetes example manifests', () => {
  it('are valid against the Kubernetes API schemas, with no field the API does not know', () => {
    const found = manifests();
    expect(found.map((m) => m.doc.kind)).to.have.members(['ConfigMap', 'Deployment', 'PodDisruptionBudget', 'Service']);
    for (const { file, doc } of found) expect(problems(doc), `${file}: ${doc.kind}`).to.deep.equal([]);
  });

  it('the check fails broken copies: a wrong type, a missing field, a misspelt field, a bad quantity, an unknown kind', () => {
    const broken: [string, (d: DeploymentDoc) => void, RegExp][] = [
      ['replicas as text', (d) => ((d.spec as Record<string, unknown>).replicas = 'two'), /spec\/replicas must be integer/],
      ['a container without a name', (d) => delete (d.spec.template.spec.containers[0] as Partial<Container>).name, /containers\/0 must have required property name/],
      ['readinessProbe misspelt', (d) => {
        const c = d.spec.template.spec.containers[0] as unknown as Record<string, unknown>;
        c.readinesProbe = c.readinessProbe;
        delete c.readinessProbe;
      }, /containers\[0\]\.readinesProbe: unknown field/],
      ['a CPU limit that is not a quantity', (d) => (d.spec.template.spec.containers[0].resources.limits.cpu = 'two cores'), /limits\/cpu must match format "quantity"/],
      ['an unknown kind', (d) => (d.kind = 'Deploymnet'), /no schema for apps\/v1\/Deploymnet/],
    ];
    for (const [what, breakIt, expected] of broken) {
      const copy = structuredClone(deployment());
      breakIt(copy);
      expect(problems(copy).join('\n'), what).to.match(expected);
    }
  });

  it("probes rt's readiness and liveness endpoints on its port", () => {
    const c = container();
    expect(c.readinessProbe.httpGet.path).to.equal('/api/ready');
    expect(c.livenessProbe.httpGet.path).to.equal('/api/health');
    const port = c.ports.find((p) => p.name === c.readinessProbe.httpGet.port && p.name === c.livenessProbe.httpGet.port);
    expect(port?.containerPort).to.equal(9481);
    const service = only<Manifest & { spec: { selector: Record<string, string>; ports: { name: string; targetPort: string }[] } }>('Service');
    expect(service.spec.ports.map((p) => [p.name, p.targetPort]), 'rt-reload-all finds the port named http').to.deep.include(['http', port!.name]);
    expect(deployment().spec.template.metadata.labels).to.include(service.spec.selector);
  });

  it('gives the pod a grace period longer than the preStop sleep, the request timeout and rt’s margin together', () => {
    const { command } = container().lifecycle.preStop.exec;
    expect(command.slice(0, 1)).to.deep.equal(['sleep']);
    const sleep = Number(command[1]);
    const timeout = Number(settings().data.RT__HTTP__REQUEST_TIMEOUT_SECONDS ?? 30);
    // lib/primary/supervisor.ts: the primary kills a worker still draining 5 s after the request timeout.
    const margin = 5;
    expect(deployment().spec.template.spec.terminationGracePeriodSeconds).to.be.above(sleep + timeout + margin);
  });

  it('runs as many workers as the CPU limit, and settings rt accepts', () => {
    const { data, metadata } = settings();
    expect(container().envFrom.map((e) => e.configMapRef.name)).to.include(metadata.name);
    expect(Number(data.RT__WORKERS)).to.equal(Number(container().resources.limits.cpu));
    expect(Object.keys(data).every((k) => k.startsWith('RT__') || k.startsWith('OTEL_'))).to.equal(true);
    // Throws a ConfigError naming the variable for an unknown key or a bad value.
    const config = loadConfig({ cwd: DIR, env: data, userConfigFile: join(DIR, 'no-such-config.toml') });
    expect(traceSettings(data), 'traces on, with settings rt accepts').to.deep.include({ endpoint: 'http://otel-collector.observability:4318/v1/traces', protocol: 'http/protobuf' });
    expect(config.workers).to.equal(Number(data.RT__WORKERS));
    // Behind the ingress, shares are per client only if rt believes the proxy's X-Forwarded-For.
    expect(config.http.trusted_proxies).to.deep.equal(['10.0.0.0/8']);
  });

  it("runs as non-root on a read-only root filesystem, with the image's cache and data directories on volumes", () => {
    const image = envOf(parseDockerfile(readFileSync(join(ROOT, 'Dockerfile'), 'utf8')).at(-1)!);
    const c = container();
    expect(deployment().spec.template.spec.securityContext.runAsNonRoot).to.equal(true);
    expect(c.securityContext).to.include({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false });
    expect(c.volumeMounts.map((m) => m.mountPath)).to.include.members([image.RT_CACHE_DIR, image.RT_DATA_DIR]);
  });
});
