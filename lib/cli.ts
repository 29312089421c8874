// The `rt` command line (docs/api.md §3).

import { readFileSync } from 'node:fs';
import sade from 'sade';
import { ConfigError, formatConfig, loadConfig, type Config } from './config/index.js';
import { createLogger } from './log.js';
import { StartupError } from './startup-error.js';
import { traceSettings, type TraceSettings } from './tracing/settings.js';

const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

const LOGO = String.raw`
        _
   _ __| |_     rt ${pkg.version}
  | '__| __|    WebAssembly components, served over HTTP
  | |  | |_
  |_|   \__|
`;

/** Exit code for any bad configuration or usage (docs/api.md §2), and for what rt was started with that it cannot use (StartupError). */
const EXIT_USAGE = 2;

function fail(message: string): never {
  process.stderr.write(`rt: ${message}\n`);
  process.exit(EXIT_USAGE);
}

/** The OTEL_* variables' trace settings (docs/api.md §7): a value rt cannot honour is a configuration error. */
function tracesFrom(env: NodeJS.ProcessEnv): TraceSettings | undefined {
  try {
    return traceSettings(env);
  } catch (e) {
    if (e instanceof ConfigError) fail(e.message);
    throw e;
  }
}

function configFrom(opts: { config?: unknown }): Config {
  try {
    return loadConfig({ cwd: process.cwd(), env: process.env, configFile: typeof opts.config === 'string' ? opts.config : undefined });
  } catch (e) {
    if (e instanceof ConfigError) fail(e.message);
    throw e;
  }
}

export function cli(argv: string[]): void {
  const prog = sade('rt').version(pkg.version);

  prog
    .command('start')
    .describe('Start the runtime: a primary process and one worker per core serving the components over HTTP.')
    .option('--verbose', 'Show all logs (debug level, every worker)', false)
    .option('--logo-off', 'Do not print the logo', false)
    .option('--config', 'An extra configuration file, applied over rt/config.toml and the user config')
    .action(async (opts: { verbose: boolean; 'logo-off': boolean; config?: string }) => {
      const config = configFrom(opts);
      const traces = tracesFrom(process.env);
      if (!opts['logo-off']) process.stdout.write(LOGO + '\n');
      const log = createLogger(opts.verbose ? 'debug' : config.log.level, { role: 'primary' });
      if (traces) log.info({ endpoint: traces.endpoint, protocol: traces.protocol }, 'traces: each worker exports spans over OTLP/HTTP');
      // Loaded here, not at the top: `rt config` and `--help` need none of the runtime (jco, Koa).
      const { Supervisor } = await import('./primary/supervisor.js');
      const supervisor = new Supervisor({ version: pkg.version, config, cwd: process.cwd(), verbose: opts.verbose, log });
      try {
        await supervisor.start();
      } catch (e) {
        if (e instanceof StartupError) {
          process.stderr.write(`rt: ${e.message}\n`);
          await supervisor.stop(EXIT_USAGE, 'start-up failed');
          return;
        }
        log.fatal({ err: e }, 'could not start');
        await supervisor.stop(1, 'start-up failed');
      }
    });

  prog
    .command('config')
    .describe('Print the merged configuration (defaults, rt/config.toml, user config, --config, RT__* variables).')
    .option('--format', 'toml or json', 'toml')
    .option('--config', 'An extra configuration file, applied over rt/config.toml and the user config')
    .action((opts: { format: string; config?: string }) => {
      if (opts.format !== 'toml' && opts.format !== 'json') fail(`--format: expected toml or json, got ${JSON.stringify(opts.format)}`);
      const config = configFrom(opts);
      process.stdout.write(formatConfig(config, opts.format));
    });

  prog.parse(argv, {
    unknown: (flag: string) => fail(`unknown option ${flag} (see rt --help)`),
  });
}
