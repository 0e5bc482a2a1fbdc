import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, ErrorCodes, type ConfigProblem } from '@offsetsync/contracts';
import { loadConfig, type LoadConfigOptions } from './load-config.js';

const dir = mkdtempSync(join(tmpdir(), 'offsetsync-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let fileCounter = 0;
function writeConfig(text: string): string {
  fileCounter += 1;
  const file = join(dir, `config-${fileCounter}.yaml`);
  writeFileSync(file, text);
  return file;
}

function problemsOf(options: LoadConfigOptions): ConfigProblem[] {
  try {
    loadConfig(options);
  } catch (e: unknown) {
    if (e instanceof ConfigError) return [...e.problems];
    throw e;
  }
  throw new Error('expected loadConfig to fail');
}

const VALID_YAML = `
clusters:
  source:
    bootstrapServers: [127.0.0.1:9092]
  target-a:
    bootstrapServers: [127.0.0.1:9093]
    sasl: { mechanism: scram-sha-512, username: sync, password: s3cret }
links:
  - { source: source, target: target-a }
collector:
  cluster: source
  fetchMaxWaitMs: 250ms
translator:
  target: target-a
committer:
  target: target-a
`;

describe('loadConfig', () => {
  it('loads an empty environment with every default', () => {
    const config = loadConfig({ env: {} });
    expect(config.instance.id).toBe(`${hostname()}-${process.pid}`);
    expect(config.nats).toEqual({
      servers: ['nats://127.0.0.1:4222'],
      provisioning: 'create',
      streamReplicas: 1,
      subjectPrefix: 'osync',
      connectTimeoutMs: 5_000,
      reconnectWaitMs: 1_000,
    });
    expect(config.heartbeat.intervalMs).toBe(2_000);
    expect(config.telemetry).toEqual({
      serviceNamespace: 'offsetsync',
      prometheus: { enabled: true, host: '0.0.0.0', port: 9464 },
    });
    expect(config.logging).toEqual({ level: 'info', pretty: false });
    expect(config.collector).toBeUndefined();
  });

  it('reads the YAML file and fills section defaults', () => {
    const config = loadConfig({ file: writeConfig(VALID_YAML), env: {} });
    expect(config.clusters['target-a']).toMatchObject({
      bootstrapServers: ['127.0.0.1:9093'],
      connectionTimeoutMs: 10_000,
      requestTimeoutMs: 30_000,
    });
    expect(config.collector).toEqual({
      cluster: 'source',
      offsetsTopic: '__consumer_offsets',
      consumerGroup: 'offsetsync-collector-source',
      groups: { include: ['.*'], exclude: ['^offsetsync-'] },
      topics: { include: ['.*'], exclude: ['^__'] },
      fetchMaxWaitMs: 250,
      sessionTimeoutMs: 30_000,
      publishConcurrency: 500,
      anchorCacheSize: 100_000,
      distinctCheckRecords: 400,
    });
    expect(config.translator).toMatchObject({
      target: 'target-a',
      pendingRetryMinMs: 200,
      pendingFallbackAfterMs: 0,
    });
    expect(config.committer).toEqual({
      target: 'target-a',
      activeGroupRetryMs: 30_000,
      groupConnections: 32,
      maxBatch: 500,
      ackWaitMs: 30_000,
      retryBackoffMinMs: 1_000,
      retryBackoffMaxMs: 30_000,
    });
  });

  it('finds the file through OFFSETSYNC_CONFIG', () => {
    const config = loadConfig({ env: { OFFSETSYNC_CONFIG: writeConfig(VALID_YAML) } });
    // A link commits unless its mode says otherwise.
    expect(config.links).toEqual([{ source: 'source', target: 'target-a', mode: 'commit' }]);
  });

  it('lets the environment beat the file, and overrides beat both', () => {
    const file = writeConfig(
      `${VALID_YAML}\nnats:\n  servers: [nats://file:4222]\n  subjectPrefix: fromfile\n`,
    );
    const config = loadConfig({
      file,
      env: {
        OFFSETSYNC_COLLECTOR__FETCH_MAX_WAIT_MS: '50ms',
        OFFSETSYNC_NATS__SERVERS: 'nats://a:4222,nats://b:4222',
        OFFSETSYNC_NATS__SUBJECT_PREFIX: 'fromenv',
        OFFSETSYNC_CLUSTERS__SOURCE__BOOTSTRAP_SERVERS: '10.0.0.1:9092',
        OFFSETSYNC_CLUSTERS__TARGET_A__TLS__ENABLED: 'true',
        OFFSETSYNC_TELEMETRY__PROMETHEUS__PORT: '0',
      },
      overrides: { nats: { subjectPrefix: 'fromtest' } },
    });
    expect(config.collector?.fetchMaxWaitMs).toBe(50);
    expect(config.nats.servers).toEqual(['nats://a:4222', 'nats://b:4222']);
    expect(config.nats.subjectPrefix).toBe('fromtest');
    expect(config.clusters.source?.bootstrapServers).toEqual(['10.0.0.1:9092']);
    expect(config.clusters['target-a']?.tls).toEqual({ enabled: true, rejectUnauthorized: true });
    expect(config.telemetry.prometheus.port).toBe(0);
  });

  it('builds a whole configuration from the environment alone', () => {
    const config = loadConfig({
      env: {
        OFFSETSYNC_CLUSTERS__SRC__BOOTSTRAP_SERVERS: '127.0.0.1:9092',
        OFFSETSYNC_CLUSTERS__DST__BOOTSTRAP_SERVERS: '127.0.0.1:9093',
        OFFSETSYNC_LINKS: '[{"source":"src","target":"dst"}]',
        OFFSETSYNC_COMMITTER__TARGET: 'dst',
        OFFSETSYNC_INSTANCE__ID: 'committer-0',
      },
    });
    expect(config.committer?.target).toBe('dst');
    expect(config.instance.id).toBe('committer-0');
  });

  it('reports every problem at once', () => {
    const problems = problemsOf({
      file: writeConfig(`
clusters:
  source: { bootstrapServers: [localhost] }
links: [{ source: source, target: nowhere }]
nats: { streamReplicas: 2, surprise: true }
collector: { cluster: source, fetchMaxWaitMs: 10s }
`),
      env: { OFFSETSYNC_LOGGING__LEVEL: 'loud' },
    });
    expect(problems).toEqual(
      expect.arrayContaining([
        {
          path: 'clusters.source.bootstrapServers.0',
          message: 'must be host:port with a port from 1 to 65535',
        },
        { path: 'links.0.target', message: expect.stringMatching(/unknown cluster "nowhere"/) as string },
        { path: 'nats.streamReplicas', message: expect.stringMatching(/expected one of 1\|3/) as string },
        { path: 'nats.surprise', message: 'unknown setting' },
        { path: 'collector.fetchMaxWaitMs', message: 'must be at most 5s, got 10s' },
        {
          path: 'logging.level',
          message: expect.stringMatching(/\(from OFFSETSYNC_LOGGING__LEVEL\)$/) as string,
        },
      ]),
    );
    expect(problems).toHaveLength(6);
  });

  it('refuses a renamed or removed setting and says what to write instead, in the file and the environment', () => {
    const problems = problemsOf({
      file: writeConfig(`
clusters:
  source: { bootstrapServers: ['localhost:9092'] }
  dst: { bootstrapServers: ['localhost:9093'] }
links: [{ source: source, target: dst }]
collector: { cluster: source, coalesceWindowMs: 20ms, publishBatchSize: 10 }
committer: { target: dst, batchMaxWaitMs: 20ms }
`),
      env: { OFFSETSYNC_COLLECTOR__COALESCE_WINDOW_MS: '30ms' },
    });
    expect(problems).toEqual([
      {
        path: 'env:OFFSETSYNC_COLLECTOR__COALESCE_WINDOW_MS',
        message: 'renamed to OFFSETSYNC_COLLECTOR__FETCH_MAX_WAIT_MS',
      },
      { path: 'collector.coalesceWindowMs', message: 'renamed to collector.fetchMaxWaitMs' },
      { path: 'collector.publishBatchSize', message: 'renamed to collector.publishConcurrency' },
      {
        path: 'committer.batchMaxWaitMs',
        message: expect.stringMatching(/^no longer a setting: it had no effect/) as string,
      },
    ]);
  });

  it('throws one ConfigError whose message lists each problem', () => {
    try {
      loadConfig({
        env: {},
        overrides: { nats: { servers: [] }, heartbeat: { intervalMs: 'often' }, extra: 1 },
      });
      expect.unreachable();
    } catch (e: unknown) {
      expect(e).toBeInstanceOf(ConfigError);
      const error = e as ConfigError;
      expect(error.code).toBe(ErrorCodes.CONFIG_INVALID);
      expect(error.problems.map((p) => p.path)).toEqual(['nats.servers', 'heartbeat.intervalMs', 'extra']);
      expect(error.message.split('\n')).toHaveLength(4);
    }
  });

  it('rejects unknown keys, with their path', () => {
    const problems = problemsOf({
      env: {},
      overrides: {
        clusters: { src: { bootstrapServers: ['h:1'], bootstrap: 'typo' } },
        logging: { colour: true },
      },
    });
    expect(problems).toEqual([
      { path: 'clusters.src.bootstrap', message: 'unknown setting' },
      { path: 'logging.colour', message: 'unknown setting' },
    ]);
  });

  it('rejects unknown OFFSETSYNC_ variables instead of ignoring them', () => {
    const problems = problemsOf({ env: { OFFSETSYNC_NATS__SERVER: 'nats://x:4222', OFFSETSYNC_CONFIG: '' } });
    expect(problems).toHaveLength(1);
    expect(problems[0]?.path).toBe('env:OFFSETSYNC_NATS__SERVER');
    expect(problems[0]?.message).toMatch(/unknown setting SERVER under nats/);
  });

  /** What a pod of a release called `offsetsync` gets from Kubernetes for the chart's health Service. */
  const HEALTH_SERVICE_LINKS = {
    OFFSETSYNC_HEALTH_SERVICE_HOST: '10.0.0.1',
    OFFSETSYNC_HEALTH_SERVICE_PORT: '9090',
    OFFSETSYNC_HEALTH_SERVICE_PORT_GRPC: '9090',
    OFFSETSYNC_HEALTH_PORT: 'tcp://10.0.0.1:9090',
    OFFSETSYNC_HEALTH_PORT_9090_TCP: 'tcp://10.0.0.1:9090',
    OFFSETSYNC_HEALTH_PORT_9090_TCP_PROTO: 'tcp',
    OFFSETSYNC_HEALTH_PORT_9090_TCP_PORT: '9090',
    OFFSETSYNC_HEALTH_PORT_9090_TCP_ADDR: '10.0.0.1',
  };

  it('loads in a Kubernetes pod with service links and in a shell with the test bed variables (issue 17)', () => {
    const config = loadConfig({
      file: writeConfig(VALID_YAML),
      env: {
        ...HEALTH_SERVICE_LINKS,
        OFFSETSYNC_TESTBED: 'reuse',
        OFFSETSYNC_TESTBED_FILE: '/tmp/testbed.json',
        OFFSETSYNC_INFRA_CACHE: '/tmp/cache',
        OFFSETSYNC_HEALTH__GRPC__PORT: '9191',
      },
    });
    expect(config.health?.grpc.port).toBe(9191);
  });

  it.each(['OFFSETSYNC_NATS__SERVRES', 'OFFSETSYNC_LINK', 'OFFSETSYNC_HEALTH__GRPC_PORT'])(
    'still refuses the mistyped %s next to service links, naming it',
    (name) => {
      const problems = problemsOf({
        env: { ...HEALTH_SERVICE_LINKS, OFFSETSYNC_TESTBED: 'reuse', [name]: 'x' },
      });
      expect(problems).toEqual([
        { path: `env:${name}`, message: expect.stringMatching(/^unknown environment variable/) as string },
      ]);
    },
  );

  it('reports unparseable environment values with the variable name', () => {
    const problems = problemsOf({ env: { OFFSETSYNC_TELEMETRY__PROMETHEUS__ENABLED: 'yes' } });
    expect(problems).toEqual([
      {
        path: 'telemetry.prometheus.enabled',
        message: 'expected true or false, got "yes" (from OFFSETSYNC_TELEMETRY__PROMETHEUS__ENABLED)',
      },
    ]);
  });

  it('accepts durations as strings or milliseconds and rejects others', () => {
    const config = loadConfig({
      env: { OFFSETSYNC_HEARTBEAT__INTERVAL_MS: '1500' },
      overrides: { nats: { connectTimeoutMs: '2m', reconnectWaitMs: 0 } },
    });
    expect(config.heartbeat.intervalMs).toBe(1_500);
    expect(config.nats.connectTimeoutMs).toBe(120_000);
    expect(config.nats.reconnectWaitMs).toBe(0);

    const problems = problemsOf({
      env: {},
      overrides: { nats: { connectTimeoutMs: '5 seconds', reconnectWaitMs: -5 } },
    });
    expect(problems.map((p) => p.path)).toEqual(['nats.connectTimeoutMs', 'nats.reconnectWaitMs']);
  });

  it('reports regular expressions that do not compile, with their path', () => {
    const problems = problemsOf({
      env: {},
      overrides: {
        clusters: { src: { bootstrapServers: ['h:1'] } },
        collector: {
          cluster: 'src',
          groups: { include: ['^ok$', '(unclosed'] },
          topics: { exclude: ['[z-a]'] },
        },
      },
    });
    expect(problems.map((p) => p.path)).toEqual(['collector.groups.include.1', 'collector.topics.exclude.0']);
    expect(problems[0]?.message).toMatch(/Invalid regular expression/);
  });

  it('refuses a filter pattern that compiles only without the flags the collector compiles it with', () => {
    // `orders\-eu` and `a]` are valid without the Unicode flag and invalid with it.
    const problems = problemsOf({
      env: {},
      overrides: {
        clusters: { src: { bootstrapServers: ['h:1'] } },
        collector: { cluster: 'src', groups: { include: ['a]'] }, topics: { include: ['orders\\-eu'] } },
      },
    });
    expect(problems.map((p) => p.path)).toEqual(['collector.groups.include.0', 'collector.topics.include.0']);
    expect(() => new RegExp('orders\\-eu')).not.toThrow();
  });

  it("reads a link's topic names, and refuses settings of another policy, an empty map and names Kafka refuses", () => {
    const clusters = { src: { bootstrapServers: ['h:1'] }, dst: { bootstrapServers: ['h:2'] } };
    const config = loadConfig({
      env: {},
      overrides: {
        clusters,
        links: [{ source: 'src', target: 'dst', topicNames: { policy: 'mirrormaker2', separator: '_' } }],
      },
    });
    expect(config.links[0]?.topicNames).toEqual({ policy: 'mirrormaker2', separator: '_' });
    const problems = problemsOf({
      env: {},
      overrides: {
        clusters: {
          ...clusters,
          third: { bootstrapServers: ['h:3'] },
          fourth: { bootstrapServers: ['h:4'] },
        },
        links: [
          { source: 'src', target: 'dst', topicNames: { separator: '-' } },
          { source: 'src', target: 'third', topicNames: { policy: 'map' } },
          { source: 'src', target: 'fourth', topicNames: { policy: 'map', map: { orders: 'orders/v2' } } },
          { source: 'dst', target: 'src', topicNames: { policy: 'mirrormaker2', map: { a: 'b' }, other: 1 } },
        ],
      },
    });
    expect(problems.map((p) => [p.path, p.message])).toEqual([
      ['links.0.topicNames.separator', 'only for policy mirrormaker2 (policy is identity)'],
      ['links.1.topicNames.map', 'policy map needs a map of at least one topic'],
      ['links.2.topicNames.map.orders', expect.stringMatching(/must be a Kafka topic name/)],
      ['links.3.topicNames.other', 'unknown setting'],
      ['links.3.topicNames.map', 'only for policy map (policy is mirrormaker2)'],
    ]);
  });

  it("reads a link's mode, and refuses one it does not know, with its path", () => {
    const clusters = { src: { bootstrapServers: ['a:1'] }, dst: { bootstrapServers: ['b:1'] } };
    const observing = loadConfig({
      env: {},
      overrides: { clusters, links: [{ source: 'src', target: 'dst', mode: 'observe' }] },
    });
    expect(observing.links[0]?.mode).toBe('observe');
    expect(() =>
      loadConfig({
        env: {},
        overrides: { clusters, links: [{ source: 'src', target: 'dst', mode: 'shadow' }] },
      }),
    ).toThrow(/links\.0\.mode/);
  });

  it("checks a link's group and topic filters at load, with their paths", () => {
    const problems = problemsOf({
      env: {},
      overrides: {
        clusters: { src: { bootstrapServers: ['h:1'] }, dst: { bootstrapServers: ['h:2'] } },
        links: [
          {
            source: 'src',
            target: 'dst',
            groups: { exclude: ['(unclosed'] },
            topics: { include: ['ok'], other: [] },
          },
        ],
      },
    });
    expect(problems.map((p) => p.path)).toEqual(['links.0.groups.exclude.0', 'links.0.topics.other']);
    expect(problems[0]?.message).toMatch(/Invalid regular expression/);
  });

  it('checks that sections and links name known clusters', () => {
    const problems = problemsOf({
      env: {},
      overrides: {
        clusters: { src: { bootstrapServers: ['h:1'] }, dst: { bootstrapServers: ['h:2'] } },
        links: [
          { source: 'src', target: 'dst' },
          { source: 'src', target: 'dst' },
          { source: 'dst', target: 'dst' },
          { source: 'ghost', target: 'dst' },
        ],
        collector: { cluster: 'elsewhere' },
        translator: { target: 'src', pendingRetryMinMs: '20s', pendingRetryMaxMs: '1s' },
        committer: { target: 'phantom', retryBackoffMinMs: '1m', retryBackoffMaxMs: '5s' },
      },
    });
    expect(problems.map((p) => p.path)).toEqual([
      'links.1',
      'links.2',
      'links.3.source',
      'collector.cluster',
      'translator.target',
      'committer.target',
      'translator.pendingRetryMinMs',
      'committer.retryBackoffMinMs',
    ]);
    expect(problems.find((p) => p.path === 'translator.target')?.message).toBe(
      'cluster "src" is not the target of any link',
    );
    expect(problems.find((p) => p.path === 'links.1')?.message).toMatch(/duplicate of links.0/);
  });

  it('rejects invalid cluster aliases', () => {
    const problems = problemsOf({
      env: {},
      overrides: { clusters: { Prod_EU: { bootstrapServers: ['h:1'] } } },
    });
    expect(problems).toHaveLength(1);
    expect(problems[0]?.path).toBe('clusters.Prod_EU');
    expect(problems[0]?.message).toMatch(/invalid key "Prod_EU"/);
  });

  it('reports YAML syntax errors with line and column', () => {
    const file = writeConfig('nats:\n  servers: [nats://a:4222\nlogging: {}\n');
    const problems = problemsOf({ file, env: {} });
    expect(problems.length).toBeGreaterThan(0);
    expect(problems[0]?.path).toMatch(
      new RegExp(`^file:${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:\\d+:\\d+$`),
    );
    expect(problems[0]?.message).toMatch(/^YAML syntax error: /);
  });

  it('reports duplicate YAML keys, a missing file and a non-mapping document', () => {
    expect(problemsOf({ file: writeConfig('logging: {}\nlogging: {}\n'), env: {} })[0]?.message).toMatch(
      /YAML/,
    );
    expect(problemsOf({ file: join(dir, 'missing.yaml'), env: {} })[0]?.message).toMatch(/cannot read/);
    expect(problemsOf({ file: writeConfig('- a\n- b\n'), env: {} })[0]?.message).toMatch(
      /mapping at the top level/,
    );
  });

  it('applies an override to one place of a YAML alias only', () => {
    const file = writeConfig(`
clusters:
  src: &common { bootstrapServers: ['h:1'] }
  dst: *common
`);
    const config = loadConfig({ file, env: { OFFSETSYNC_CLUSTERS__DST__BOOTSTRAP_SERVERS: 'h:2' } });
    expect(config.clusters.src?.bootstrapServers).toEqual(['h:1']);
    expect(config.clusters.dst?.bootstrapServers).toEqual(['h:2']);
  });

  it('treats an empty file as all defaults', () => {
    expect(loadConfig({ file: writeConfig(''), env: {} }).logging.level).toBe('info');
  });

  it('says "required" for a missing field', () => {
    const problems = problemsOf({ env: {}, overrides: { committer: {} } });
    expect(problems).toEqual([{ path: 'committer.target', message: 'required' }]);
  });
});

describe('secrets and TLS files', () => {
  const secret = join(dir, 'password');
  writeFileSync(secret, 'from-a-file\n');
  const cluster = (sasl: Record<string, unknown>) => ({
    clusters: {
      a: { bootstrapServers: ['h:1'], sasl: { mechanism: 'scram-sha-512', username: 'u', ...sasl } },
    },
  });

  it('takes a SASL password from a file instead of inline', () => {
    const config = loadConfig({ env: {}, overrides: cluster({ passwordFile: secret }) });
    expect(config.clusters.a?.sasl?.passwordFile).toBe(secret);
  });

  it('requires exactly one of password and passwordFile for SASL', () => {
    expect(problemsOf({ env: {}, overrides: cluster({}) })).toEqual([
      { path: 'clusters.a.sasl.password', message: 'required: set password or passwordFile' },
    ]);
    expect(problemsOf({ env: {}, overrides: cluster({ password: 'x', passwordFile: secret }) })).toEqual([
      { path: 'clusters.a.sasl.passwordFile', message: 'set password or passwordFile, not both' },
    ]);
  });

  it('reports every secret or certificate file it cannot read, with the rest of the problems', () => {
    const missing = join(dir, 'no-such-file');
    const problems = problemsOf({
      env: {},
      overrides: {
        ...cluster({ passwordFile: missing }),
        nats: { user: 'n', passwordFile: missing, tls: { caFile: missing } },
      },
    });
    expect(problems.map((p) => p.path)).toEqual([
      'clusters.a.sasl.passwordFile',
      'nats.passwordFile',
      'nats.tls.caFile',
    ]);
    expect(problems[0]?.message).toMatch(/^cannot read .*no-such-file: ENOENT/);
  });

  it('allows one way of authenticating to NATS, complete', () => {
    const paths = (nats: Record<string, unknown>) =>
      problemsOf({ env: {}, overrides: { nats } }).map((p) => p.path);
    expect(paths({ user: 'n' })).toEqual(['nats.passwordFile']);
    expect(paths({ password: 'p' })).toEqual(['nats.user']);
    expect(paths({ user: 'n', password: 'p', token: 't' })).toEqual(['nats.token']);
    expect(paths({ token: 't', tokenFile: secret })).toEqual(['nats.tokenFile']);
    expect(paths({ nkeySeedFile: secret, credsFile: secret })).toEqual(['nats.credsFile']);
  });

  it('takes a NATS client certificate only with its key', () => {
    expect(
      problemsOf({ env: {}, overrides: { nats: { tls: { certFile: secret } } } }).map((p) => p.path),
    ).toEqual(['nats.tls.keyFile']);
    const config = loadConfig({ env: {}, overrides: { nats: { tls: { caFile: secret } } } });
    expect(config.nats.tls).toEqual({ caFile: secret });
  });
});
