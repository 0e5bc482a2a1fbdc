import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { describeConfigSchema } from './describe-config.js';
import { envNameForPath, toEnvSegment } from './env-names.js';
import { parseEnvValue, readEnvOverrides, resolveEnvName } from './env-overrides.js';

/** Aliases the environment can address: valid aliases without `--` and not ending in `-`. */
const addressableAlias = fc
  .stringMatching(/^[a-z][a-z0-9-]{0,31}$/)
  .filter((alias) => !alias.includes('--') && !alias.endsWith('-'));

const envAddressableRows = describeConfigSchema().filter((row) => row.env !== undefined);

describe('toEnvSegment', () => {
  it.each([
    ['bootstrapServers', 'BOOTSTRAP_SERVERS'],
    ['fetchMaxWaitMs', 'FETCH_MAX_WAIT_MS'],
    ['caFile', 'CA_FILE'],
    ['grpc', 'GRPC'],
    ['eu-west-1', 'EU_WEST_1'],
  ])('%s -> %s', (key, segment) => {
    expect(toEnvSegment(key)).toBe(segment);
  });
});

describe('env name <-> path', () => {
  it('every setting resolves back from its environment variable name, whatever the alias', () => {
    fc.assert(
      fc.property(fc.constantFrom(...envAddressableRows), addressableAlias, (row, alias) => {
        const path = row.path.split('.').map((segment) => (segment === '<alias>' ? alias : segment));
        const name = envNameForPath(path);
        const resolved = resolveEnvName(name);
        expect(resolved).toMatchObject({ ok: true, resolved: { path } });
      }),
    );
  });

  it('documents the same names it resolves', () => {
    expect(envAddressableRows.map((row) => row.env)).toContain('OFFSETSYNC_COLLECTOR__FETCH_MAX_WAIT_MS');
    expect(envAddressableRows.map((row) => row.env)).toContain(
      'OFFSETSYNC_CLUSTERS__<ALIAS>__BOOTSTRAP_SERVERS',
    );
  });

  it('maps map keys to lower case with - for _', () => {
    const resolved = resolveEnvName('OFFSETSYNC_CLUSTERS__EU_WEST_1__SASL__PASSWORD');
    expect(resolved).toEqual({
      ok: true,
      resolved: { path: ['clusters', 'eu-west-1', 'sasl', 'password'], kind: 'string', values: [] },
    });
  });

  it.each([
    ['OFFSETSYNC_NOPE', /unknown setting NOPE at the top level/],
    ['OFFSETSYNC_NATS__SERVER', /unknown setting SERVER under nats/],
    ['OFFSETSYNC_NATS', /section, not a setting/],
    ['OFFSETSYNC_CLUSTERS__SRC', /section, not a setting/],
    ['OFFSETSYNC_NATS__SERVERS__X', /single setting/],
    ['OFFSETSYNC_NATS____SERVERS', /malformed segment/],
    ['OFFSETSYNC_nats__servers', /malformed segment/],
  ])('%s names no setting', (name, message) => {
    const resolved = resolveEnvName(name);
    expect(resolved.ok).toBe(false);
    if (!resolved.ok) expect(resolved.message).toMatch(message);
  });
});

describe('parseEnvValue', () => {
  it('parses per leaf kind', () => {
    expect(parseEnvValue('42', { kind: 'integer', values: [] })).toEqual({ ok: true, value: 42 });
    expect(parseEnvValue('true', { kind: 'boolean', values: [] })).toEqual({ ok: true, value: true });
    expect(parseEnvValue('250', { kind: 'duration', values: [] })).toEqual({ ok: true, value: 250 });
    expect(parseEnvValue('5s', { kind: 'duration', values: [] })).toEqual({ ok: true, value: '5s' });
    expect(parseEnvValue('3', { kind: 'literal', values: [1, 3] })).toEqual({ ok: true, value: 3 });
    expect(parseEnvValue('a:1, b:2', { kind: 'string-array', values: [] })).toEqual({
      ok: true,
      value: ['a:1', 'b:2'],
    });
    expect(parseEnvValue('[{"a":1}]', { kind: 'json', values: [] })).toEqual({ ok: true, value: [{ a: 1 }] });
  });

  it('rejects what does not parse rather than guessing', () => {
    expect(parseEnvValue('yes', { kind: 'boolean', values: [] }).ok).toBe(false);
    expect(parseEnvValue('12abc', { kind: 'integer', values: [] }).ok).toBe(false);
    expect(parseEnvValue('[', { kind: 'json', values: [] }).ok).toBe(false);
  });
});

describe('readEnvOverrides', () => {
  it('ignores other variables and OFFSETSYNC_CONFIG, reports unknown ones', () => {
    const { overrides, problems } = readEnvOverrides({
      PATH: '/usr/bin',
      OFFSETSYNC_CONFIG: '/etc/offsetsync.yaml',
      OFFSETSYNC_NATS__STREAM_REPLICAS: '3',
      OFFSETSYNC_TYPO: 'x',
    });
    expect(overrides).toEqual([
      { name: 'OFFSETSYNC_NATS__STREAM_REPLICAS', path: ['nats', 'streamReplicas'], value: 3 },
    ]);
    expect(problems).toHaveLength(1);
    expect(problems[0]?.path).toBe('env:OFFSETSYNC_TYPO');
  });
});
