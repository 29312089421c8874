// Traces' settings from the OTEL_* variables (lib/tracing/settings.ts), and
// the rule that keeps tracing free when it is off: OpenTelemetry's packages
// are imported by one module, which only a dynamic import reaches.

import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { traceSettings } from '../../lib/tracing/settings.js';
import { ConfigError } from '../../lib/config/errors.js';

const LIB = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'lib');

describe('trace settings (OTEL_* variables)', () => {
  const on = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };

  it('is off without an endpoint, with OTEL_SDK_DISABLED=true, and with OTEL_TRACES_EXPORTER=none', () => {
    expect(traceSettings({})).to.equal(undefined);
    expect(traceSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: '' })).to.equal(undefined);
    expect(traceSettings({ ...on, OTEL_SDK_DISABLED: 'TRUE' })).to.equal(undefined);
    expect(traceSettings({ ...on, OTEL_TRACES_EXPORTER: 'none' })).to.equal(undefined);
    expect(traceSettings({ ...on, OTEL_SDK_DISABLED: 'false' })).to.not.equal(undefined);
  });

  it('posts to /v1/traces below the general endpoint, to the traces endpoint as given, over protobuf unless told json', () => {
    expect(traceSettings(on)).to.deep.include({ endpoint: 'http://collector:4318/v1/traces', protocol: 'http/protobuf' });
    expect(traceSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://collector/otlp/' })?.endpoint).to.equal('https://collector/otlp/v1/traces');
    expect(traceSettings({ ...on, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://other:4318/custom' })?.endpoint).to.equal('http://other:4318/custom');
    expect(traceSettings({ ...on, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' })?.protocol).to.equal('http/json');
    expect(traceSettings({ ...on, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json' })?.protocol, 'the signal’s own first').to.equal('http/json');
  });

  it('reads the sampler and the batch processor’s bounds, with the specification’s defaults', () => {
    expect(traceSettings(on)).to.deep.include({
      sampler: { kind: 'parentbased', root: { kind: 'always_on' } },
      batch: { scheduledDelayMillis: 5_000, exportTimeoutMillis: 30_000, maxQueueSize: 2_048, maxExportBatchSize: 512 },
    });
    expect(traceSettings({ ...on, OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.25' })?.sampler).to.deep.equal({ kind: 'traceidratio', ratio: 0.25 });
    expect(traceSettings({ ...on, OTEL_TRACES_SAMPLER: 'parentbased_always_off' })?.sampler).to.deep.equal({ kind: 'parentbased', root: { kind: 'always_off' } });
    expect(traceSettings({ ...on, OTEL_BSP_MAX_QUEUE_SIZE: '10', OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '5', OTEL_BSP_SCHEDULE_DELAY: '100' })?.batch).to.deep.include({ maxQueueSize: 10, maxExportBatchSize: 5, scheduledDelayMillis: 100 });
  });

  it('refuses what it cannot honour with a configuration error naming the variable', () => {
    const refused: [Record<string, string>, string][] = [
      [{ ...on, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }, 'OTEL_EXPORTER_OTLP_PROTOCOL: expected http/protobuf or http/json (rt exports over OTLP/HTTP; grpc is not built in), got "grpc"'],
      [{ ...on, OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/xml' }, 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: expected http/protobuf or http/json (rt exports over OTLP/HTTP; grpc is not built in), got "http/xml"'],
      [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }, 'OTEL_EXPORTER_OTLP_ENDPOINT: expected an http: or https: URL, got "collector:4318"'],
      [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'not a url' }, 'OTEL_EXPORTER_OTLP_ENDPOINT: expected an http: or https: URL, got "not a url"'],
      [{ ...on, OTEL_TRACES_EXPORTER: 'zipkin' }, 'OTEL_TRACES_EXPORTER: expected otlp or none (rt exports traces over OTLP only), got "zipkin"'],
      [{ ...on, OTEL_TRACES_SAMPLER: 'parentbased_sometimes' }, 'OTEL_TRACES_SAMPLER: expected always_on, always_off, traceidratio, or one of them after parentbased_, got "parentbased_sometimes"'],
      [{ ...on, OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '1.5' }, 'OTEL_TRACES_SAMPLER_ARG: expected a ratio from 0 to 1, got "1.5"'],
      [{ ...on, OTEL_BSP_SCHEDULE_DELAY: '0' }, 'OTEL_BSP_SCHEDULE_DELAY: expected a whole number of at least 1, got "0"'],
      [{ ...on, OTEL_BSP_EXPORT_TIMEOUT: '1.5' }, 'OTEL_BSP_EXPORT_TIMEOUT: expected a whole number of at least 1, got "1.5"'],
      [{ ...on, OTEL_BSP_MAX_QUEUE_SIZE: '8', OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '9' }, 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE: expected at most OTEL_BSP_MAX_QUEUE_SIZE (8), got "9"'],
    ];
    for (const [env, message] of refused) {
      expect(() => traceSettings(env), message).to.throw(ConfigError, message);
    }
  });
});

describe('traces cost nothing when off', () => {
  /** Every lib/ module, as `lib/...ts`, with the modules it imports (as written) and whether each import is dynamic. */
  function imports(): Map<string, { target: string; dynamic: boolean }[]> {
    const found = new Map<string, { target: string; dynamic: boolean }[]>();
    const walk = (dir: string): void => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) walk(path);
        else if (entry.name.endsWith('.ts')) {
          const source = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest);
          const list: { target: string; dynamic: boolean }[] = [];
          const visit = (node: ts.Node): void => {
            if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) list.push({ target: node.moduleSpecifier.text, dynamic: false });
            if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword && ts.isStringLiteral(node.arguments[0])) list.push({ target: node.arguments[0].text, dynamic: true });
            ts.forEachChild(node, visit);
          };
          visit(source);
          found.set(`lib/${relative(LIB, path)}`, list);
        }
      }
    };
    walk(LIB);
    return found;
  }

  it("imports OpenTelemetry's packages in one module, which only a dynamic import (when traces are on) reaches", () => {
    const all = imports();
    const sdkUsers = [...all].filter(([, list]) => list.some((i) => i.target.startsWith('@opentelemetry/'))).map(([module]) => module);
    expect(sdkUsers).to.deep.equal(['lib/tracing/otlp-exporter.ts']);
    const importers = [...all].flatMap(([module, list]) => list.filter((i) => i.target.endsWith('/otlp-exporter.js')).map((i) => ({ module, dynamic: i.dynamic })));
    expect(importers).to.deep.equal([{ module: 'lib/tracing/start.ts', dynamic: true }]);
  });
});
