import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ListGroupsRequest, PartitionSyncState } from '@offsetsync/contracts';
import { listGroups } from './health-api.js';
import { HealthState, type HealthEvent } from './health-state.js';

const T = {
  stalledAfterMs: 30_000,
  laggingAboveMs: 5_000,
  missingAfterHeartbeats: 3,
  forgetLinkAfterMs: 600_000,
};

/** A commit of partition 0 of `group`'s topic t on source a, at version `version`. */
const committed = (group: string, version: number, offset: number): HealthEvent => ({
  kind: 'committed',
  source: 'a',
  group,
  topic: 't',
  partition: 0,
  fact: {
    version: { offsetsPartition: 0, offsetsOffset: version },
    offset,
    commitTimestampMs: 1,
    observedAtMs: 1,
  },
});

function stateWith(groups: string[]): HealthState {
  const state = new HealthState([{ source: 'a', target: 'b' }], T);
  groups.forEach((group, i) => state.apply(committed(group, i, i)));
  return state;
}

describe('ListGroups', () => {
  it('returns every matching group exactly once across its pages, in order (property)', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.string({ maxLength: 6 }), { maxLength: 30 }),
        fc.integer({ min: 1, max: 7 }),
        fc.string({ maxLength: 1 }),
        (groups, pageSize, groupPrefix) => {
          const state = stateWith(groups);
          const seen: string[] = [];
          let pageToken = '';
          do {
            const page = listGroups(
              state,
              ListGroupsRequest.fromPartial({ pageSize, pageToken, groupPrefix }),
            );
            expect(page.groups.length).toBeLessThanOrEqual(pageSize);
            seen.push(...page.groups.map((g) => g.group));
            pageToken = page.nextPageToken;
          } while (pageToken !== '');
          expect(seen).toEqual(groups.filter((g) => g.startsWith(groupPrefix)).sort());
        },
      ),
    );
  });

  it('lists groups added after an earlier listing, in order, whatever was listed before (property)', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.string({ maxLength: 4 }), { minLength: 4, maxLength: 30 }),
        fc.integer({ min: 2, max: 30 }),
        fc.integer({ min: 1, max: 3 }),
        (groups, split, pageSize) => {
          const at = Math.min(split, groups.length - 1);
          const state = stateWith(groups.slice(0, at));
          const first = listGroups(state, ListGroupsRequest.fromPartial({ pageSize }));
          // A listing that ended on its first page is done; the new groups are for the next one.
          fc.pre(first.nextPageToken !== '');
          // More groups arrive between two pages of a listing.
          groups.slice(at).forEach((group, i) => state.apply(committed(group, 1_000 + i, i)));
          const seen = first.groups.map((g) => g.group);
          let pageToken = first.nextPageToken;
          while (pageToken !== '') {
            const page = listGroups(state, ListGroupsRequest.fromPartial({ pageSize, pageToken }));
            seen.push(...page.groups.map((g) => g.group));
            pageToken = page.nextPageToken;
          }
          // Every group after the last one of the first page, old or new, follows it in order.
          const last = first.groups.at(-1)?.group;
          const expected = [...groups].sort().filter((g) => last === undefined || g > last);
          expect(seen).toEqual([...first.groups.map((g) => g.group), ...expected]);
        },
      ),
    );
  });

  it('filters by partition state and rejects bad page sizes and tokens with typed errors', () => {
    const state = stateWith(['x', 'y']);
    const synced = listGroups(
      state,
      ListGroupsRequest.fromPartial({ state: PartitionSyncState.PARTITION_SYNC_STATE_SYNCED }),
    );
    expect(synced.groups).toEqual([]);
    const pending = listGroups(
      state,
      ListGroupsRequest.fromPartial({ state: PartitionSyncState.PARTITION_SYNC_STATE_PENDING }),
    );
    expect(pending.groups.map((g) => g.group)).toEqual(['x', 'y']);
    expect(() => listGroups(state, ListGroupsRequest.fromPartial({ pageSize: 1001 }))).toThrow(/page_size/);
    expect(() => listGroups(state, ListGroupsRequest.fromPartial({ pageToken: 'nope' }))).toThrow(
      /page_token/,
    );
  });
});

describe('link filters', () => {
  it('shows a group a link excludes as EXCLUDED there, naming the filter, and as usual on the other link', () => {
    const state = new HealthState(
      [
        { source: 'a', target: 'cloud', groups: { include: ['.*'], exclude: ['^private-'] } },
        { source: 'a', target: 'dr' },
      ],
      T,
    );
    state.apply({
      kind: 'committed',
      source: 'a',
      group: 'private-billing',
      topic: 't',
      partition: 0,
      fact: {
        version: { offsetsPartition: 0, offsetsOffset: 1 },
        offset: 5,
        commitTimestampMs: 1,
        observedAtMs: 1,
      },
    });
    const cloud = state.groupStatus({ source: 'a', target: 'cloud' }, 'private-billing')?.partitions[0];
    expect(cloud).toMatchObject({
      state: PartitionSyncState.PARTITION_SYNC_STATE_EXCLUDED,
      sourceOffset: 5,
      reason: 'not sent to this target: the link\'s groups exclude "^private-"',
    });
    const dr = state.groupStatus({ source: 'a', target: 'dr' }, 'private-billing')?.partitions[0];
    expect(dr?.state).toBe(PartitionSyncState.PARTITION_SYNC_STATE_PENDING);
    const excluded = listGroups(
      state,
      ListGroupsRequest.fromPartial({ state: PartitionSyncState.PARTITION_SYNC_STATE_EXCLUDED }),
    );
    expect(excluded.groups.map((g) => [g.targetCluster, g.group])).toEqual([['cloud', 'private-billing']]);
  });
});
