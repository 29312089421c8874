import { expect } from 'chai';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { ConfigError, formatConfig, loadConfig, referenceTable, type Config, type LoadOptions } from '../../lib/config/index.js';

// The keys of docs/api.md §2, written out here rather than taken from the schema,
// so that a key missing from the schema fails these tests.
const CONTRACT_KEYS = [
  'repo_urls',
  'workers',
  'http.host',
  'http.port',
  'http.tls_enable',
  'http.tls_port',
  'http.tls_cert',
  'http.tls_key',
  'http.request_timeout_seconds',
  'http.stream_timeout_seconds',
  'http.max_body_bytes',
  'http.max_connections',
  'http.client_share_percent',
  'http.min_body_bytes_per_second',
  'http.trusted_proxies',
  'http.cors.enabled',
  'http.cors.allowed_origins',
  'http.cors.allowed_methods',
  'http.control.allowed_origins',
  'http.control.token',
  'runtime.max_memory_mb',
  'runtime.max_thread_heap_mb',
  'runtime.heartbeat_timeout_seconds',
  'repositories.ca_file',
  'repositories.download_timeout_seconds',
  'repositories.max_download_bytes',
  'repositories.max_component_mib',
  'repositories.trusted',
  'repositories.watch',
  'repositories.settle_ms',
  'repositories.poll_seconds',
  'log.level',
  'log.requests',
  'console.enabled',
];

const DEFAULTS: Config = {
  repo_urls: [],
  workers: availableParallelism(),
  http: {
    host: '0.0.0.0',
    port: 9481,
    tls_enable: false,
    tls_port: 9443,
    request_timeout_seconds: 30,
    stream_timeout_seconds: 300,
    max_body_bytes: 10485760,
    max_connections: 1000,
    client_share_percent: 50,
    min_body_bytes_per_second: 1024,
    trusted_proxies: [],
    cors: { enabled: true, allowed_origins: ['*'], allowed_methods: ['GET', 'POST', 'PUT', 'DELETE'] },
    control: { allowed_origins: [] },
  },
  runtime: { max_memory_mb: 256, max_thread_heap_mb: 512, heartbeat_timeout_seconds: 5 },
  repositories: { download_timeout_seconds: 30, max_download_bytes: 104857600, max_component_mib: 256, trusted: [], watch: false, settle_ms: 500, poll_seconds: 30 },
  log: { level: 'info', requests: true },
  console: { enabled: true },
};

describe('config', () => {
  let root: string;
  let cwd: string;
  let userFile: string;

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'rt-config-'));
    cwd = join(root, 'cwd');
    mkdirSync(cwd);
    userFile = join(root, 'user', 'config.toml');
  });

  afterEach(() => rmSync(root, { recursive: true, force: true }));

  function write(path: string, text: string): string {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, text);
    return path;
  }

  const project = (text: string): string => write(join(cwd, 'rt', 'config.toml'), text);
  const user = (text: string): string => write(userFile, text);
  const extra = (text: string, name = 'extra.toml'): string => (write(join(cwd, name), text), name);

  function load(opts: Partial<LoadOptions> = {}): Config {
    return loadConfig({ cwd, env: {}, userConfigFile: userFile, ...opts });
  }

  /** The ConfigError `load` throws, checked to be one line. */
  function loadError(opts: Partial<LoadOptions> = {}): ConfigError {
    try {
      load(opts);
    } catch (e) {
      expect(e).to.be.instanceOf(ConfigError);
      const error = e as ConfigError;
      expect(error.message).not.to.match(/[\r\n]/);
      return error;
    }
    throw new Error('expected a ConfigError');
  }

  describe('defaults', () => {
    it('gives the contract defaults when no file or variable is set', () => {
      expect(load()).to.deep.equal(DEFAULTS);
    });

    it('leaves the optional TLS files out rather than setting them to undefined', () => {
      const config = load();
      expect(config.http).not.to.have.property('tls_cert');
      expect(config.http).not.to.have.property('tls_key');
    });

    it('returns fresh arrays, so a caller changing one does not change the defaults', () => {
      load().http.cors.allowed_origins.push('https://changed.example');
      expect(load().http.cors.allowed_origins).to.deep.equal(['*']);
    });

    it('ignores variables that are not RT__ ones', () => {
      const env = { RT_CACHE_DIR: '/tmp/x', RT_CONFIG_DIR: '/tmp/y', PATH: '/bin', HTTP_PORT: '1', rt__http__port: '2', RT_HTTP__PORT: '3' };
      expect(load({ env })).to.deep.equal(DEFAULTS);
    });
  });

  describe('each layer alone', () => {
    it('reads rt/config.toml in the working directory', () => {
      project('repo_urls = ["file://./components"]\n[http]\nport = 8000\n');
      const config = load();
      expect(config.repo_urls).to.deep.equal(['file://./components']);
      expect(config.http.port).to.equal(8000);
      expect(config.http.host).to.equal('0.0.0.0');
    });

    it('reads the user config file', () => {
      user('workers = 3\n[log]\nlevel = "debug"\n');
      expect(load()).to.deep.equal({ ...DEFAULTS, workers: 3, log: { level: 'debug', requests: true } });
    });

    it('finds the user config file in the user config directory by default', () => {
      const saved = process.env.RT_CONFIG_DIR;
      process.env.RT_CONFIG_DIR = join(root, 'config-dir');
      try {
        write(join(root, 'config-dir', 'config.toml'), 'workers = 5\n');
        expect(loadConfig({ cwd, env: {} }).workers).to.equal(5);
      } finally {
        if (saved === undefined) delete process.env.RT_CONFIG_DIR;
        else process.env.RT_CONFIG_DIR = saved;
      }
    });

    it('reads --config relative to the working directory', () => {
      const name = extra('[http.cors]\nenabled = false\n');
      expect(load({ configFile: name }).http.cors.enabled).to.equal(false);
    });

    it('reads --config given as an absolute path', () => {
      const path = write(join(root, 'elsewhere.toml'), '[http]\ntls_cert = "certs/rt.pem"\ntls_key = "certs/rt.key"\n');
      const config = load({ configFile: path });
      expect(config.http.tls_cert).to.equal('certs/rt.pem');
      expect(config.http.tls_key).to.equal('certs/rt.key');
    });

    it('reads a --config file ending in .json as JSON', () => {
      const name = extra('{"http": {"port": 8443, "cors": {"allowed_methods": ["GET"]}}, "log": {"level": "warn"}}', 'extra.json');
      const config = load({ configFile: name });
      expect(config.http.port).to.equal(8443);
      expect(config.http.cors.allowed_methods).to.deep.equal(['GET']);
      expect(config.log.level).to.equal('warn');
    });

    it('reads RT__ variables', () => {
      const config = load({ env: { RT__HTTP__PORT: '8081', RT__HTTP__HOST: '127.0.0.1', RT__LOG__LEVEL: 'error' } });
      expect(config.http.port).to.equal(8081);
      expect(config.http.host).to.equal('127.0.0.1');
      expect(config.log.level).to.equal('error');
    });

    it('skips the project and user files when they do not exist', () => {
      expect(load({ userConfigFile: join(root, 'no', 'such', 'config.toml') })).to.deep.equal(DEFAULTS);
    });

    it('skips rt/config.toml when `rt` in the working directory is a file', () => {
      writeFileSync(join(cwd, 'rt'), 'a binary, say');
      expect(load()).to.deep.equal(DEFAULTS);
    });

    it('accepts empty files', () => {
      project('');
      user('# nothing here\n');
      expect(load({ configFile: extra('') })).to.deep.equal(DEFAULTS);
    });
  });

  describe('precedence', () => {
    // Each layer sets http.port; the highest layer present wins.
    const setups: Array<[string, number]> = [
      ['defaults', 9481],
      ['rt/config.toml', 1001],
      ['user file', 1002],
      ['--config', 1003],
      ['RT__ variables', 1004],
    ];

    setups.forEach(([name, port], level) => {
      it(`takes http.port from ${name} when it is the highest layer setting it`, () => {
        if (level >= 1) project('[http]\nport = 1001\n');
        if (level >= 2) user('[http]\nport = 1002\n');
        const configFile = level >= 3 ? extra('[http]\nport = 1003\n') : undefined;
        const env = level >= 4 ? { RT__HTTP__PORT: '1004' } : {};
        expect(load({ configFile, env }).http.port).to.equal(port);
      });
    });

    it('applies all five layers in order, each keeping the keys the later ones do not set', () => {
      project('workers = 2\n[http]\nport = 1001\nhost = "10.0.0.1"\nrequest_timeout_seconds = 5\n');
      user('workers = 3\n[http]\nport = 1002\nmax_body_bytes = 1024\n');
      const configFile = extra('[http]\nport = 1003\n[log]\nlevel = "trace"\n');
      const config = load({ configFile, env: { RT__HTTP__PORT: '1004', RT__HTTP__TLS_ENABLE: 'true' } });
      expect(config).to.deep.equal({
        ...DEFAULTS,
        workers: 3,
        http: { ...DEFAULTS.http, host: '10.0.0.1', port: 1004, request_timeout_seconds: 5, max_body_bytes: 1024, tls_enable: true },
        log: { level: 'trace', requests: true },
      });
    });

    it('merges tables key by key, nested tables included', () => {
      project('[http]\nport = 7000\n[http.cors]\nallowed_origins = ["https://a.example"]\n');
      user('[http]\nhost = "::"\n[http.cors]\nenabled = false\n');
      const config = load();
      expect(config.http).to.deep.equal({
        ...DEFAULTS.http,
        host: '::',
        port: 7000,
        cors: { enabled: false, allowed_origins: ['https://a.example'], allowed_methods: ['GET', 'POST', 'PUT', 'DELETE'] },
      });
    });

    it('replaces arrays as a whole rather than appending to them', () => {
      project('repo_urls = ["file://./a", "file://./b"]\n[http.cors]\nallowed_origins = ["https://a.example", "https://b.example"]\n');
      user('repo_urls = ["file:///srv/components"]\n');
      const config = load({ env: { RT__HTTP__CORS__ALLOWED_ORIGINS: 'https://c.example' } });
      expect(config.repo_urls).to.deep.equal(['file:///srv/components']);
      expect(config.http.cors.allowed_origins).to.deep.equal(['https://c.example']);
    });

    it('lets a later layer empty an array', () => {
      project('repo_urls = ["file://./a"]\n');
      expect(load({ configFile: extra('repo_urls = []\n') }).repo_urls).to.deep.equal([]);
      expect(load({ env: { RT__REPO_URLS: '' } }).repo_urls).to.deep.equal([]);
    });
  });

  describe('environment variables', () => {
    const env = (vars: Record<string, string>): Config => load({ env: vars });

    it('coerces integers', () => {
      expect(env({ RT__WORKERS: '12' }).workers).to.equal(12);
      expect(env({ RT__HTTP__MAX_BODY_BYTES: '1099511627776' }).http.max_body_bytes).to.equal(2 ** 40);
      expect(env({ RT__HTTP__REQUEST_TIMEOUT_SECONDS: ' 60 ' }).http.request_timeout_seconds).to.equal(60);
    });

    for (const spelling of ['true', 'TRUE', 'True', '1']) {
      it(`reads ${JSON.stringify(spelling)} as true`, () => {
        expect(env({ RT__HTTP__TLS_ENABLE: spelling }).http.tls_enable).to.equal(true);
      });
    }

    for (const spelling of ['false', 'FALSE', 'False', '0']) {
      it(`reads ${JSON.stringify(spelling)} as false`, () => {
        expect(env({ RT__HTTP__CORS__ENABLED: spelling }).http.cors.enabled).to.equal(false);
      });
    }

    it('splits string lists on spaces', () => {
      expect(env({ RT__HTTP__CORS__ALLOWED_ORIGINS: 'https://a.example  https://b.example' }).http.cors.allowed_origins).to.deep.equal([
        'https://a.example',
        'https://b.example',
      ]);
    });

    it('splits string lists on commas, dropping empty items', () => {
      expect(env({ RT__HTTP__CORS__ALLOWED_METHODS: 'GET,POST, PUT ,,DELETE,' }).http.cors.allowed_methods).to.deep.equal(['GET', 'POST', 'PUT', 'DELETE']);
    });

    it('splits URL lists on whitespace only, since a URL may contain a comma', () => {
      expect(env({ RT__REPO_URLS: 'file://./a\thttps://cdn.example/x,y.wasm\n file:///srv' }).repo_urls).to.deep.equal([
        'file://./a',
        'https://cdn.example/x,y.wasm',
        'file:///srv',
      ]);
    });

    it('sets strings, including the optional TLS files', () => {
      const config = env({ RT__HTTP__TLS_CERT: '/etc/rt/cert.pem', RT__HTTP__TLS_KEY: '/etc/rt/key.pem' });
      expect(config.http.tls_cert).to.equal('/etc/rt/cert.pem');
      expect(config.http.tls_key).to.equal('/etc/rt/key.pem');
    });

    it('reads the log level in any case', () => {
      expect(env({ RT__LOG__LEVEL: 'DEBUG' }).log.level).to.equal('debug');
    });
  });

  describe('errors', () => {
    it('reports unparsable TOML with the file and line', () => {
      project('[http]\nport = 80\nhost = = "x"\n');
      const e = loadError();
      expect(e.message).to.match(/^rt\/config\.toml: invalid TOML at line 3: \S/);
      expect(e.layer).to.equal('rt/config.toml');
      expect(e.key).to.equal(undefined);
    });

    it('reports a duplicate table as invalid TOML', () => {
      expect(loadError({ configFile: extra('[http]\nport = 1\n[http]\nhost = "a"\n') }).message).to.match(/^extra\.toml: invalid TOML at line 3: /);
    });

    it('reports unparsable JSON with the file and line', () => {
      const name = extra('{\n  "http": {\n    "port": 80,\n  }\n}\n', 'extra.json');
      expect(loadError({ configFile: name }).message).to.match(/^extra\.json: invalid JSON at line 4: /);
    });

    it('reports a string where an integer is expected', () => {
      project('[http]\nport = "8080"\n');
      const e = loadError();
      expect(e.message).to.equal('rt/config.toml: http.port: expected an integer between 1 and 65535, got "8080"');
      expect(e.layer).to.equal('rt/config.toml');
      expect(e.key).to.equal('http.port');
    });

    it('reports a float where an integer is expected', () => {
      project('workers = 4.0\n');
      expect(loadError().message).to.equal('rt/config.toml: workers: expected an integer between 1 and 1024, got 4.0');
    });

    it('reports a value of the wrong type for booleans, strings and arrays', () => {
      expect(loadError({ configFile: extra('[http]\ntls_enable = "yes"\n') }).message).to.equal(
        'extra.toml: http.tls_enable: expected a boolean (true or false), got "yes"',
      );
      expect(loadError({ configFile: extra('[http]\nhost = 80\n') }).message).to.equal('extra.toml: http.host: expected a non-empty string, got 80');
      expect(loadError({ configFile: extra('repo_urls = "file://./a"\n') }).message).to.equal(
        'extra.toml: repo_urls: expected an array of file: or https: URLs, got "file://./a"',
      );
      expect(loadError({ configFile: extra('[http.cors]\nallowed_origins = ["a", 1]\n') }).message).to.equal(
        'extra.toml: http.cors.allowed_origins: expected an array of `*` or http(s) origins (https://app.example), got ["a", 1]',
      );
    });

    it('reports a table where a value is expected, and a value where a table is expected', () => {
      expect(loadError({ configFile: extra('[http.port]\nnumber = 80\n') }).message).to.equal(
        'extra.toml: http.port: expected an integer between 1 and 65535, got a table',
      );
      expect(loadError({ configFile: extra('http = "0.0.0.0:80"\n') }).message).to.equal('extra.toml: http: expected a table, got "0.0.0.0:80"');
    });

    it('reports an unknown key, suggesting the likely one', () => {
      user('[htp]\nport = 80\n');
      const e = loadError();
      expect(e.message).to.equal(`${userFile}: unknown key "htp.port" (did you mean "http.port"?)`);
      expect(e.layer).to.equal(userFile);
      expect(e.key).to.equal('htp.port');
    });

    it('reports an unknown top-level key without a far-fetched suggestion', () => {
      expect(loadError({ configFile: extra('colour = "blue"\n') }).message).to.equal('extra.toml: unknown key "colour"');
    });

    it('reports an unknown nested table', () => {
      project('[http.corz]\nenabled = false\n');
      expect(loadError().message).to.equal('rt/config.toml: unknown key "http.corz.enabled" (did you mean "http.cors.enabled"?)');
    });

    it('does not take a quoted dotted key for a nested one', () => {
      expect(loadError({ configFile: extra('"http.port" = 80\n') }).message).to.match(/^extra\.toml: unknown key '"http\.port"'/);
    });

    it('reports an unknown key in a JSON file', () => {
      expect(loadError({ configFile: extra('{"http": {"prot": 80}}', 'extra.json') }).message).to.equal(
        'extra.json: unknown key "http.prot" (did you mean "http.port"?)',
      );
    });

    it('reports an unknown RT__ variable', () => {
      const e = loadError({ env: { RT__HTTP__PROT: '80' } });
      expect(e.message).to.equal('RT__HTTP__PROT: unknown key "http.prot" (did you mean RT__HTTP__PORT?)');
      expect(e.layer).to.equal('RT__HTTP__PROT');
    });

    it('reports a variable with a single underscore between table and key as unknown', () => {
      expect(loadError({ env: { RT__HTTP_PORT: '80' } }).message).to.equal('RT__HTTP_PORT: unknown key "http_port" (did you mean RT__HTTP__PORT?)');
    });

    it('reports a variable naming a table rather than a key as unknown', () => {
      expect(loadError({ env: { RT__HTTP: 'x' } }).message).to.match(/^RT__HTTP: unknown key "http"/);
    });

    for (const bad of ['12abc', '1.5', '', '0x10', '1e3', 'eight']) {
      it(`reports the integer variable ${JSON.stringify(bad)}`, () => {
        const e = loadError({ env: { RT__WORKERS: bad } });
        expect(e.message).to.equal(`RT__WORKERS: workers: expected an integer between 1 and 1024, got ${JSON.stringify(bad)}`);
        expect(e.key).to.equal('workers');
      });
    }

    for (const bad of ['yes', 'no', 'on', '2', '']) {
      it(`reports the boolean variable ${JSON.stringify(bad)}`, () => {
        expect(loadError({ env: { RT__HTTP__TLS_ENABLE: bad } }).message).to.equal(
          `RT__HTTP__TLS_ENABLE: http.tls_enable: expected a boolean (true/false/1/0), got ${JSON.stringify(bad)}`,
        );
      });
    }

    it('reads log.requests, and reports a value that is not a boolean', () => {
      expect(load({ env: { RT__LOG__REQUESTS: 'false' } }).log.requests).to.equal(false);
      expect(loadError({ env: { RT__LOG__REQUESTS: 'quiet' } }).message).to.equal('RT__LOG__REQUESTS: log.requests: expected a boolean (true/false/1/0), got "quiet"');
      expect(loadError({ configFile: extra('[log]\nrequests = "no"\n') }).message).to.equal('extra.toml: log.requests: expected a boolean (true or false), got "no"');
    });

    it('reports a port out of range in a file', () => {
      project('[http]\nport = 70000\n');
      expect(loadError().message).to.equal('rt/config.toml: http.port: expected an integer between 1 and 65535, got 70000');
      rmSync(join(cwd, 'rt'), { recursive: true });
      expect(loadError({ configFile: extra('[http]\ntls_port = 0\n') }).message).to.equal(
        'extra.toml: http.tls_port: expected an integer between 1 and 65535, got 0',
      );
    });

    it('reports a port out of range in a variable', () => {
      expect(loadError({ env: { RT__HTTP__PORT: '70000' } }).message).to.equal('RT__HTTP__PORT: http.port: expected an integer between 1 and 65535, got 70000');
      expect(loadError({ env: { RT__HTTP__TLS_PORT: '-1' } }).message).to.equal(
        'RT__HTTP__TLS_PORT: http.tls_port: expected an integer between 1 and 65535, got -1',
      );
    });

    it('reports workers = 0', () => {
      expect(loadError({ configFile: extra('workers = 0\n') }).message).to.equal('extra.toml: workers: expected an integer between 1 and 1024, got 0');
    });

    it('reports the other bounds: timeouts, body size', () => {
      expect(loadError({ configFile: extra('[http]\nrequest_timeout_seconds = 86401\n') }).message).to.equal(
        'extra.toml: http.request_timeout_seconds: expected an integer between 1 and 86400, got 86401',
      );
      expect(loadError({ env: { RT__HTTP__STREAM_TIMEOUT_SECONDS: '0' } }).message).to.equal(
        'RT__HTTP__STREAM_TIMEOUT_SECONDS: http.stream_timeout_seconds: expected an integer between 1 and 86400, got 0',
      );
      expect(loadError({ configFile: extra('[http]\nstream_timeout_seconds = "5m"\n') }).message).to.match(/^extra\.toml: http\.stream_timeout_seconds: expected an integer between 1 and 86400, got "5m"/);
      expect(loadError({ env: { RT__HTTP__MAX_BODY_BYTES: '0' } }).message).to.equal(
        'RT__HTTP__MAX_BODY_BYTES: http.max_body_bytes: expected an integer of at least 1, got 0',
      );
    });

    it('reports a fair share out of 1–100 and a negative body rate (docs/api.md §5.10)', () => {
      expect(loadError({ env: { RT__HTTP__CLIENT_SHARE_PERCENT: '0' } }).message).to.equal('RT__HTTP__CLIENT_SHARE_PERCENT: http.client_share_percent: expected an integer between 1 and 100, got 0');
      expect(loadError({ configFile: extra('[http]\nclient_share_percent = 150\n') }).message).to.equal('extra.toml: http.client_share_percent: expected an integer between 1 and 100, got 150');
      expect(loadError({ env: { RT__HTTP__MIN_BODY_BYTES_PER_SECOND: '-1' } }).message).to.equal(
        'RT__HTTP__MIN_BODY_BYTES_PER_SECOND: http.min_body_bytes_per_second: expected an integer between 0 and 1073741824, got -1',
      );
    });

    it('takes repositories.watch from a variable and reports every wrong watch value (docs/api.md §5.4)', () => {
      expect(load({ env: { RT__REPOSITORIES__WATCH: 'true' } }).repositories.watch).to.equal(true);
      expect(load({ configFile: extra('[repositories]\nwatch = true\nsettle_ms = 50\npoll_seconds = 86400\n') }).repositories).to.deep.include({ watch: true, settle_ms: 50, poll_seconds: 86400 });
      expect(loadError({ env: { RT__REPOSITORIES__WATCH: 'yes' } }).message).to.equal('RT__REPOSITORIES__WATCH: repositories.watch: expected a boolean (true/false/1/0), got "yes"');
      expect(loadError({ configFile: extra('[repositories]\nwatch = "true"\n') }).message).to.equal('extra.toml: repositories.watch: expected a boolean (true or false), got "true"');
      const settle = 'repositories.settle_ms: expected an integer between 50 and 60000';
      expect(loadError({ env: { RT__REPOSITORIES__SETTLE_MS: '49' } }).message).to.equal(`RT__REPOSITORIES__SETTLE_MS: ${settle}, got 49`);
      expect(loadError({ configFile: extra('[repositories]\nsettle_ms = 60001\n') }).message).to.equal(`extra.toml: ${settle}, got 60001`);
      expect(loadError({ configFile: extra('[repositories]\nsettle_ms = 0.5\n') }).message).to.match(/^extra\.toml: repositories\.settle_ms: expected an integer between 50 and 60000, got /);
      expect(loadError({ env: { RT__REPOSITORIES__SETTLE_MS: '500ms' } }).message).to.equal(`RT__REPOSITORIES__SETTLE_MS: ${settle}, got "500ms"`);
      const poll = 'repositories.poll_seconds: expected an integer between 1 and 86400';
      expect(loadError({ env: { RT__REPOSITORIES__POLL_SECONDS: '0' } }).message).to.equal(`RT__REPOSITORIES__POLL_SECONDS: ${poll}, got 0`);
      expect(loadError({ configFile: extra('[repositories]\npoll_seconds = 86401\n') }).message).to.equal(`extra.toml: ${poll}, got 86401`);
      expect(loadError({ configFile: extra('[repositories]\npoll_seconds = "30s"\n') }).message).to.equal(`extra.toml: ${poll}, got "30s"`);
    });

    it('reports a bad log level', () => {
      const expected = 'expected one of fatal, error, warn, info, debug, trace, silent, got "verbose"';
      expect(loadError({ configFile: extra('[log]\nlevel = "verbose"\n') }).message).to.equal(`extra.toml: log.level: ${expected}`);
      expect(loadError({ env: { RT__LOG__LEVEL: 'verbose' } }).message).to.equal(`RT__LOG__LEVEL: log.level: ${expected}`);
    });

    for (const url of ['http://example.com/c.wasm', 'ftp://example.com/', 'components/greeter.wasm']) {
      it(`reports the repository URL ${url}`, () => {
        expect(loadError({ configFile: extra(`repo_urls = ["file://./ok", ${JSON.stringify(url)}]\n`) }).message).to.equal(
          `extra.toml: repo_urls: expected each item to be a file: or https: URL (a file: URL with its path: file:///srv/components), got ${JSON.stringify(url)}`,
        );
      });
    }

    it('reports a bad repository URL in a variable', () => {
      expect(loadError({ env: { RT__REPO_URLS: 'file://./ok http://example.com' } }).message).to.equal(
        'RT__REPO_URLS: repo_urls: expected each item to be a file: or https: URL (a file: URL with its path: file:///srv/components), got "http://example.com"',
      );
    });

    it('reports an unknown CORS method', () => {
      expect(loadError({ env: { RT__HTTP__CORS__ALLOWED_METHODS: 'GET,FETCH' } }).message).to.equal(
        'RT__HTTP__CORS__ALLOWED_METHODS: http.cors.allowed_methods: expected each item to be one of GET, HEAD, POST, PUT, DELETE, PATCH, OPTIONS, CONNECT, TRACE, got "FETCH"',
      );
    });

    for (const range of ['10.0.0.0/33', 'fd00::/129', '10.0.0.1/8/1', 'proxy.internal', '10.0.0', '']) {
      it(`reports the trusted proxy ${JSON.stringify(range)}`, () => {
        expect(loadError({ configFile: extra(`[http]\ntrusted_proxies = ["10.0.0.0/8", ${JSON.stringify(range)}]\n`) }).message).to.equal(
          `extra.toml: http.trusted_proxies: expected each item to be an IP address or CIDR range, got ${JSON.stringify(range)}`,
        );
      });
    }

    it('reads trusted proxies from a variable, split at commas and spaces', () => {
      expect(load({ env: { RT__HTTP__TRUSTED_PROXIES: '10.0.0.0/8, fd00::/8 127.0.0.1' } }).http.trusted_proxies).to.deep.equal(['10.0.0.0/8', 'fd00::/8', '127.0.0.1']);
    });

    for (const url of ['file:', 'file://', 'file://host']) {
      it(`refuses ${url} as a repository: a file URL naming no path (it would scan the working directory)`, () => {
        expect(loadError({ env: { RT__REPO_URLS: url } }).message).to.equal(`RT__REPO_URLS: repo_urls: expected each item to be a file: or https: URL (a file: URL with its path: file:///srv/components), got ${JSON.stringify(url)}`);
      });
    }

    it('takes file URLs with a path, absolute or relative', () => {
      expect(load({ env: { RT__REPO_URLS: 'file:///srv/components file:components file://. file://./components' } }).repo_urls).to.deep.equal(['file:///srv/components', 'file:components', 'file://.', 'file://./components']);
    });

    for (const origin of ['javascript:alert(1)', 'null', 'https://app.example/path', 'https://user@app.example', 'ftp://app.example', 'app.example', 'https://app.example?x']) {
      it(`refuses ${origin} as an allowed origin, for CORS and for control alike`, () => {
        for (const key of ['cors', 'control']) {
          expect(loadError({ configFile: extra(`[http.${key}]\nallowed_origins = [${JSON.stringify(origin)}]\n`) }).message).to.equal(
            `extra.toml: http.${key}.allowed_origins: expected each item to be \`*\` or an http(s) origin: scheme, host and port only (https://app.example), got ${JSON.stringify(origin)}`,
          );
        }
      });
    }

    it('takes `*` and origins, with a port or a trailing slash', () => {
      const origins = ['*', 'https://app.example', 'http://localhost:8080', 'https://Admin.example:443/'];
      expect(load({ configFile: extra(`[http.cors]\nallowed_origins = ${JSON.stringify(origins)}\n`) }).http.cors.allowed_origins).to.deep.equal(origins);
    });

    it('reports an empty string', () => {
      expect(loadError({ configFile: extra('[http]\ntls_cert = ""\n') }).message).to.equal('extra.toml: http.tls_cert: expected a non-empty string, got ""');
    });

    it('reports a missing --config file', () => {
      const e = loadError({ configFile: 'missing.toml' });
      expect(e.message).to.equal('missing.toml: cannot read the file: no such file');
      expect(e.layer).to.equal('missing.toml');
    });

    it('reports a --config that is a directory', () => {
      mkdirSync(join(cwd, 'conf.d'));
      expect(loadError({ configFile: 'conf.d' }).message).to.equal('conf.d: cannot read the file: it is a directory');
    });

    it('reports the lower layer first: a bad file stops loading even when a variable would override it', () => {
      project('[http]\nport = "x"\n');
      expect(loadError({ env: { RT__HTTP__PORT: '80' } }).layer).to.equal('rt/config.toml');
    });
  });

  describe('formatConfig', () => {
    const everything: Config = {
      repo_urls: ['file://./components', 'file:///srv/rt', 'https://cdn.example.com/index,v2/'],
      workers: 7,
      http: {
        host: '127.0.0.1',
        port: 8080,
        tls_enable: true,
        tls_port: 8443,
        tls_cert: 'C:\\certs\\rt "prod".pem',
        tls_key: "/etc/rt/clé 'privée'.pem",
        request_timeout_seconds: 86400,
        stream_timeout_seconds: 1,
        max_body_bytes: 2 ** 40,
        max_connections: 1_000_000,
        client_share_percent: 100,
        min_body_bytes_per_second: 0,
        trusted_proxies: ['10.0.0.0/8', '::1'],
        cors: { enabled: false, allowed_origins: ['https://a.example', 'https://b.example'], allowed_methods: ['GET', 'OPTIONS'] },
        control: { allowed_origins: ['https://admin.example', 'http://localhost:8080'], token: 'tok "en" \\ é' },
      },
      runtime: { max_memory_mb: 4096, max_thread_heap_mb: 2048, heartbeat_timeout_seconds: 30 },
      repositories: { ca_file: '/etc/rt/ca.pem', download_timeout_seconds: 5, max_download_bytes: 1024, max_component_mib: 256, trusted: ['https://repo.example/components/'], watch: true, settle_ms: 60_000, poll_seconds: 1 },
      log: { level: 'trace', requests: false },
      console: { enabled: false },
    };

    for (const format of ['toml', 'json'] as const) {
      it(`round-trips every key through ${format} as a --config file`, () => {
        const name = extra(formatConfig(everything, format), `out.${format}`);
        expect(load({ configFile: name })).to.deep.equal(everything);
      });

      it(`round-trips the merged configuration through ${format}, with the other layers absent`, () => {
        project('repo_urls = ["file://./a"]\n[http.cors]\nallowed_origins = ["https://x.example"]\n');
        const merged = load({ env: { RT__WORKERS: '3', RT__HTTP__TLS_ENABLE: '1' } });
        const text = formatConfig(merged, format);
        rmSync(join(cwd, 'rt'), { recursive: true });
        expect(load({ configFile: extra(text, `out.${format}`) })).to.deep.equal(merged);
      });

      it(`leaves unset optional keys out of ${format}`, () => {
        expect(formatConfig(DEFAULTS, format)).not.to.match(/tls_cert|tls_key|null/);
      });
    }

    it('is accepted back as rt/config.toml and as the user file too', () => {
      project(formatConfig(everything, 'toml'));
      expect(load()).to.deep.equal(everything);
      rmSync(join(cwd, 'rt'), { recursive: true });
      user(formatConfig(everything, 'toml'));
      expect(load()).to.deep.equal(everything);
    });

    it('writes readable TOML: root keys, then tables in schema order, integers as integers', () => {
      const text = formatConfig(DEFAULTS, 'toml');
      expect(text).to.match(/^repo_urls = \[/);
      expect(text).to.include('\n[http]\nhost = "0.0.0.0"\nport = 9481\n');
      expect(text).to.include('max_body_bytes = 10485760\n');
      expect(text).not.to.match(/= \d+\.\d/);
      const order = ['repo_urls', 'workers', '[http]', 'tls_enable', '[http.cors]', 'allowed_methods', '[log]'].map((s) => text.indexOf(s));
      expect(order.every((at) => at >= 0)).to.equal(true);
      expect(order).to.deep.equal([...order].sort((a, b) => a - b));
    });

    it('writes JSON in schema order', () => {
      const text = formatConfig(DEFAULTS, 'json');
      expect(Object.keys(JSON.parse(text) as object)).to.deep.equal(['repo_urls', 'workers', 'http', 'runtime', 'repositories', 'log', 'console']);
      expect(text.endsWith('}\n')).to.equal(true);
    });
  });

  describe('referenceTable', () => {
    it('lists every key of the contract with its variable', () => {
      const table = referenceTable();
      for (const key of CONTRACT_KEYS) {
        expect(table).to.include(`| \`${key}\` |`);
        expect(table).to.include(`\`RT__${key.toUpperCase().replaceAll('.', '__')}\``);
      }
    });

    it('is a Markdown table with one row per key', () => {
      const lines = referenceTable().trim().split('\n');
      expect(lines[0]).to.match(/^\| Key \| Type \| Default \|/);
      expect(lines[1]).to.match(/^\|(---\|)+$/);
      expect(lines.length).to.equal(2 + CONTRACT_KEYS.length);
      expect(lines.find((l) => l.startsWith('| `workers`'))).to.include('available parallelism');
    });
  });
});
