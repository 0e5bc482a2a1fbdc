import { describe, expect, it } from 'vitest';
import {
  DEFAULT_REPLICATION_POLICY,
  escapeRegex,
  IDENTITY_REPLICATION_POLICY,
  mirrorMakerProperties,
} from './mirror-maker.js';

/** Reads `key = value` lines the way java.util.Properties does for these simple files. */
function parse(text: string): Map<string, string> {
  const entries = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (line.startsWith('#') || line.trim() === '') continue;
    const at = line.indexOf('=');
    const key = line.slice(0, at).trim();
    expect(entries.has(key), `${key} set twice`).toBe(false);
    entries.set(
      key,
      line
        .slice(at + 1)
        .trim()
        .replaceAll('\\\\', '\\'),
    );
  }
  return entries;
}

describe('mirrorMakerProperties', () => {
  const properties = parse(
    mirrorMakerProperties({
      sourceBootstrapServers: '127.0.0.1:9001',
      targetBootstrapServers: '127.0.0.1:9002',
      topics: ['demo.orders', 'a-b'],
      instanceName: 'sandbox-1',
    }),
  );

  it('copies only source -> target, keeping topic names', () => {
    expect(properties.get('clusters')).toBe('source, target');
    expect(properties.get('source.bootstrap.servers')).toBe('127.0.0.1:9001');
    expect(properties.get('target.bootstrap.servers')).toBe('127.0.0.1:9002');
    expect(properties.get('source->target.enabled')).toBe('true');
    expect(properties.get('target->source.enabled')).toBe('false');
    expect(properties.get('replication.policy.class')).toBe(IDENTITY_REPLICATION_POLICY);
  });

  it('names exactly the given topics: the regex list matches them and nothing else', () => {
    const patterns = properties
      .get('source->target.topics')!
      .split(',')
      .map((p) => new RegExp(p));
    const matches = (topic: string) => patterns.some((p) => p.test(topic));
    expect(matches('demo.orders')).toBe(true);
    expect(matches('a-b')).toBe(true);
    expect(matches('demoXorders')).toBe(false);
    expect(matches('demo.orders.dlq')).toBe(false);
  });

  it("switches MirrorMaker's own offset translation off and sets no offset-syncs.* key", () => {
    expect(properties.get('emit.offset-syncs.enabled')).toBe('false');
    expect(properties.get('emit.checkpoints.enabled')).toBe('false');
    expect(properties.get('sync.group.offsets.enabled')).toBe('false');
    expect(properties.get('emit.heartbeats.enabled')).toBe('false');
    // MirrorSourceConnector refuses any offset-syncs.* setting once offset syncs are off.
    expect([...properties.keys()].filter((k) => k.startsWith('offset-syncs.'))).toEqual([]);
  });

  it('keeps its Connect state under names of the instance, with one replica', () => {
    expect(properties.get('target.group.id')).toBe('mm2-sandbox-1');
    expect(properties.get('offset.storage.topic')).toBe('mm2-sandbox-1-offsets');
    expect(properties.get('config.storage.replication.factor')).toBe('1');
    expect(properties.get('replication.factor')).toBe('1');
  });

  it('lets overrides win and refuses an empty topic list or an unsafe instance name', () => {
    const text = mirrorMakerProperties({
      sourceBootstrapServers: 'a:1',
      targetBootstrapServers: 'b:2',
      topics: ['t'],
      overrides: { 'tasks.max': '4' },
    });
    expect(text.trimEnd().endsWith('tasks.max = 4')).toBe(true);
    const base = { sourceBootstrapServers: 'a:1', targetBootstrapServers: 'b:2' };
    expect(() => mirrorMakerProperties({ ...base, topics: [] })).toThrow(/at least one topic/);
    expect(() => mirrorMakerProperties({ ...base, topics: ['t'], instanceName: 'a b' })).toThrow(
      /instance name/,
    );
  });

  it('escapes regex characters in topic names', () => {
    expect(escapeRegex('a.b*c')).toBe('a\\.b\\*c');
  });
});

describe('mirrorMakerProperties with MirrorMaker offset translation on', () => {
  const base = {
    sourceBootstrapServers: '127.0.0.1:9001',
    targetBootstrapServers: '127.0.0.1:9002',
    topics: ['t'],
  };

  it('switches offset syncs, checkpoints and group offset sync on for the given groups, tuned', () => {
    const properties = parse(
      mirrorMakerProperties({
        ...base,
        replicationPolicy: 'default',
        offsetTranslation: {
          groups: ['mm2-.*'],
          checkpointIntervalSeconds: 1,
          syncGroupOffsetsIntervalSeconds: 1,
          offsetLagMax: 0,
        },
      }),
    );
    expect(properties.get('emit.offset-syncs.enabled')).toBe('true');
    expect(properties.get('emit.checkpoints.enabled')).toBe('true');
    expect(properties.get('sync.group.offsets.enabled')).toBe('true');
    expect(properties.get('groups')).toBe('mm2-.*');
    expect(properties.get('offset-syncs.topic.replication.factor')).toBe('1');
    expect(properties.get('emit.checkpoints.interval.seconds')).toBe('1');
    expect(properties.get('sync.group.offsets.interval.seconds')).toBe('1');
    expect(properties.get('offset.lag.max')).toBe('0');
    expect(properties.get('replication.policy.class')).toBe(DEFAULT_REPLICATION_POLICY);
  });

  it("leaves MirrorMaker's defaults for the intervals and offset.lag.max when not given", () => {
    const properties = parse(mirrorMakerProperties({ ...base, offsetTranslation: { groups: ['a', 'b'] } }));
    expect(properties.get('groups')).toBe('a,b');
    expect(properties.has('emit.checkpoints.interval.seconds')).toBe(false);
    expect(properties.has('sync.group.offsets.interval.seconds')).toBe(false);
    expect(properties.has('offset.lag.max')).toBe(false);
    expect(properties.get('replication.policy.class')).toBe(IDENTITY_REPLICATION_POLICY);
  });

  it('refuses no groups and intervals that are not whole positive seconds', () => {
    expect(() => mirrorMakerProperties({ ...base, offsetTranslation: { groups: [] } })).toThrow();
    expect(() =>
      mirrorMakerProperties({
        ...base,
        offsetTranslation: { groups: ['g'], checkpointIntervalSeconds: 0.5 },
      }),
    ).toThrow();
    expect(() =>
      mirrorMakerProperties({ ...base, offsetTranslation: { groups: ['g'], offsetLagMax: -1 } }),
    ).toThrow();
  });

  it('keeps offset translation off by default, with no offset-syncs.* setting', () => {
    const properties = parse(mirrorMakerProperties(base));
    expect(properties.get('emit.offset-syncs.enabled')).toBe('false');
    expect([...properties.keys()].filter((k) => k.startsWith('offset-syncs.'))).toEqual([]);
  });
});
