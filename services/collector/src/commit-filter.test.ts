import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatCommitMetadata } from '@offsetsync/contracts';
import { OffsetSyncConfigSchema } from '@offsetsync/runtime';
import { createCommitFilter, filterRecords } from './commit-filter.js';

const defaults = {
  consumerGroup: 'offsetsync-collector-src',
  groups: { include: ['.*'], exclude: ['^offsetsync-'] },
  topics: { include: ['.*'], exclude: ['^__'] },
};

describe('commit filter', () => {
  it("drops the collector's own group even when the excludes would let it through", () => {
    const filter = createCommitFilter({
      ...defaults,
      consumerGroup: 'collectors',
      groups: { include: ['.*'], exclude: [] },
    });
    expect(filter.commit('collectors', 'orders')).toBe('own-group');
    expect(filter.group('collectors')).toBe('own-group');
  });

  it('applies the default excludes: offsetsync groups and internal topics', () => {
    const filter = createCommitFilter(defaults);
    expect(filter.commit('offsetsync-anything', 'orders')).toBe('group-filtered');
    expect(filter.commit('app', '__consumer_offsets')).toBe('topic-filtered');
    expect(filter.commit('app', 'orders')).toBe('pass');
  });

  it('needs an include match and no exclude match', () => {
    const filter = createCommitFilter({
      ...defaults,
      groups: { include: ['^billing-', '^orders$'], exclude: ['-test$'] },
      topics: { include: ['^payments\\.'], exclude: [] },
    });
    expect(filter.commit('billing-eu', 'payments.eu')).toBe('pass');
    expect(filter.commit('orders', 'payments.us')).toBe('pass');
    expect(filter.commit('billing-test', 'payments.eu')).toBe('group-filtered');
    expect(filter.commit('shipping', 'payments.eu')).toBe('group-filtered');
    expect(filter.commit('orders', 'refunds')).toBe('topic-filtered');
  });

  it('drops commits offsetsync wrote, so bidirectional links do not echo', () => {
    const filter = createCommitFilter(defaults);
    const metadata = formatCommitMetadata({ origin: 'other', offsetsPartition: 3, offsetsOffset: 9 }, 'app');
    expect(filter.commit('app', 'orders', metadata)).toBe('offsetsync-commit');
    expect(filter.commit('app', 'orders', 'plain application metadata')).toBe('pass');
  });
});

describe('filterRecords', () => {
  it('passes the records the filter lets through, in order, and gives every other one its outcome', () => {
    const version = (offsetsOffset: number) => ({ offsetsPartition: 0, offsetsOffset });
    const commit = (group: string, topic: string, offset: number) => ({
      record: {
        kind: 'offset-commit' as const,
        keyType: 1 as const,
        valueVersion: 4,
        group,
        topic,
        partition: 0,
        offset,
        leaderEpoch: -1,
        metadata: '',
        commitTimestampMs: 1,
        expireTimestampMs: -1,
      },
      version: version(offset),
    });
    const gone = {
      record: { kind: 'group-deleted' as const, recordType: 2, group: 'app' },
      version: version(9),
    };
    const { passed, dropped } = filterRecords(
      [
        commit('app', 'orders', 1),
        { record: { kind: 'group-metadata', group: 'app' }, version: version(2) },
        commit('offsetsync-collector-src', 'orders', 3),
        commit('app', '__consumer_offsets', 4),
        { record: { kind: 'coordinator-record', recordType: 5, name: 'x' }, version: version(5) },
        gone,
      ],
      createCommitFilter(defaults),
    );
    expect(passed.map((p) => p.version.offsetsOffset)).toEqual([1, 9]);
    expect(dropped).toEqual(['group_metadata', 'filtered_own_group', 'filtered_topic', 'coordinator_record']);
  });

  it('builds from every pattern the config check accepts, and the config check accepts every pattern it builds from', () => {
    const patterns = fc.oneof(
      fc.string({
        unit: fc.constantFrom('a', '-', ']', '[', '\\', '{', '}', '(', ')', 'p', '1', '|', '^', '.'),
      }),
      fc.string(),
    );
    fc.assert(
      fc.property(patterns, (pattern) => {
        const checked = OffsetSyncConfigSchema.safeParse({
          clusters: { src: { bootstrapServers: ['h:1'] } },
          collector: { cluster: 'src', topics: { include: [pattern] } },
        });
        let built = true;
        try {
          createCommitFilter({ ...defaults, topics: { include: [pattern], exclude: [] } });
        } catch {
          built = false;
        }
        expect(checked.success).toBe(built);
      }),
      { numRuns: 2_000 },
    );
  });
});
