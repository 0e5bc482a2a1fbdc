// Which links health reports: configured ones always, learnt ones while their instances run, and a link
// removed from a reloaded config once its instances are gone.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  LinkState,
  PartitionSyncState,
  RefusalReason,
  ServiceRole,
  TranslationOutcome,
} from '@offsetsync/contracts';
import { HealthState, type InstanceRecord } from './health-state.js';

const T = {
  stalledAfterMs: 30_000,
  laggingAboveMs: 5_000,
  missingAfterHeartbeats: 3,
  forgetLinkAfterMs: 60_000,
};

function committer(target: string, sources: string[], lastHeartbeatMs: number): InstanceRecord {
  return {
    role: ServiceRole.SERVICE_ROLE_COMMITTER,
    instanceId: `committer-${target}`,
    sourceClusters: sources,
    targetCluster: target,
    lastHeartbeatMs,
    intervalMs: 1_000,
    pending: 0,
    softwareVersion: '',
    problems: [],
  };
}

const names = (state: HealthState, nowMs: number) =>
  state.knownLinks(nowMs).map((l) => `${l.source}->${l.target}`);

describe('HealthState links', () => {
  it('reports a configured link whatever runs, and a learnt one until its instances were quiet for forgetLinkAfterMs', () => {
    const state = new HealthState([{ source: 'a', target: 'b' }], T);
    expect(names(state, 0)).toEqual(['a->b']);
    state.apply({ kind: 'heartbeat', instance: committer('c', ['a'], 1_000) });
    expect(names(state, 1_000)).toEqual(['a->b', 'a->c']);
    expect(names(state, 61_000)).toEqual(['a->b', 'a->c']);
    expect(names(state, 61_001)).toEqual(['a->b']);
    // It comes back with a heartbeat.
    state.apply({ kind: 'heartbeat', instance: committer('c', ['a'], 70_000) });
    expect(names(state, 70_000)).toEqual(['a->b', 'a->c']);
  });

  it('stops pinning a link removed from a reloaded config, and pins one added there', () => {
    const state = new HealthState(
      [
        { source: 'a', target: 'b' },
        { source: 'a', target: 'c' },
      ],
      T,
    );
    state.apply({ kind: 'heartbeat', instance: committer('c', ['a'], 1_000) });
    state.configure([
      { source: 'a', target: 'b' },
      { source: 'a', target: 'd' },
    ]);
    // Removed, but its committer still runs: reported until it is gone.
    expect(names(state, 2_000)).toEqual(['a->b', 'a->c', 'a->d']);
    expect(names(state, 100_000)).toEqual(['a->b', 'a->d']);
  });

  it("applies a reloaded link's filter to what health already knows", () => {
    const state = new HealthState([{ source: 'a', target: 'b' }], T);
    state.apply({
      kind: 'committed',
      source: 'a',
      group: 'private-x',
      topic: 't',
      partition: 0,
      fact: {
        version: { offsetsPartition: 0, offsetsOffset: 1 },
        offset: 5,
        commitTimestampMs: 1,
        observedAtMs: 1,
      },
    });
    expect(state.groupStatus({ source: 'a', target: 'b' }, 'private-x')?.partitions[0]?.state).toBe(
      PartitionSyncState.PARTITION_SYNC_STATE_PENDING,
    );
    state.configure([{ source: 'a', target: 'b', groups: { include: ['.*'], exclude: ['^private-'] } }]);
    expect(state.groupStatus({ source: 'a', target: 'b' }, 'private-x')?.partitions[0]).toMatchObject({
      state: PartitionSyncState.PARTITION_SYNC_STATE_EXCLUDED,
      reason: expect.stringContaining('exclude "^private-"') as unknown,
    });
  });
});

describe('HealthState hearing', () => {
  const instance = (role: ServiceRole, lastHeartbeatMs: number): InstanceRecord => ({
    ...committer('b', ['a'], lastHeartbeatMs),
    role,
    instanceId: `${ServiceRole[role]}-1`,
    sourceClusters: ['a'],
    targetCluster: role === ServiceRole.SERVICE_ROLE_COLLECTOR ? '' : 'b',
  });
  /** Every role heard at `atMs`, the collector a little earlier (its heartbeat goes quiet first). */
  const allHeard = (state: HealthState, atMs: number) => {
    state.apply({ kind: 'heartbeat', instance: instance(ServiceRole.SERVICE_ROLE_COLLECTOR, atMs - 400) });
    state.apply({ kind: 'heartbeat', instance: instance(ServiceRole.SERVICE_ROLE_TRANSLATOR, atMs) });
    state.apply({ kind: 'heartbeat', instance: instance(ServiceRole.SERVICE_ROLE_COMMITTER, atMs) });
  };
  const stateAt = (state: HealthState, nowMs: number) => {
    const [status] = state.linkStatuses(nowMs);
    return { state: LinkState[status!.status.state], reason: status!.status.reason };
  };

  it("blames no service for health's own lost connection, and counts silence again only from its recovery", () => {
    const state = new HealthState([{ source: 'a', target: 'b' }], T);
    allHeard(state, 10_000);
    expect(stateAt(state, 10_000).state).toBe('LINK_STATE_HEALTHY');
    // Without the loss, the collector (heard first) would be missing first: TARGET_ONLY, then DOWN.
    expect(stateAt(state, 12_800).state).toBe('LINK_STATE_TARGET_ONLY');

    state.lostHearing(10_500);
    for (const nowMs of [12_800, 13_500, 60_000]) {
      const { state: s, reason } = stateAt(state, nowMs);
      expect(s).toBe('LINK_STATE_HEALTHY');
      expect(reason).toContain('health has not heard from NATS for');
    }
    // Heard again at 60 s: every service has its allowed missed heartbeats from then on.
    state.regainedHearing(60_000);
    expect(stateAt(state, 62_900)).toEqual({
      state: 'LINK_STATE_HEALTHY',
      reason: expect.not.stringContaining('NATS') as unknown,
    });
    allHeard(state, 62_000);
    expect(stateAt(state, 63_000).state).toBe('LINK_STATE_HEALTHY');
    // A service that stays quiet after the recovery is missing as usual.
    expect(stateAt(state, 65_000).state).toBe('LINK_STATE_TARGET_ONLY');
  });
});

describe('HealthState forgets what was deleted on the source', () => {
  const FORGET = { ...T, forgetDeletedGroupAfterMs: 10_000 };
  const link = { source: 'a', target: 'b' };
  const commit = (state: HealthState, group: string, partition: number, version: number, atMs: number) =>
    state.apply({
      kind: 'committed',
      source: 'a',
      group,
      topic: 't',
      partition,
      fact: {
        version: { offsetsPartition: 0, offsetsOffset: version },
        offset: version,
        commitTimestampMs: atMs,
        observedAtMs: atMs,
      },
    });
  const remove = (state: HealthState, group: string, version: number, atMs: number, partition?: number) =>
    state.apply({
      kind: 'deleted',
      source: 'a',
      group,
      ...(partition === undefined ? {} : { partition: { topic: 't', partition } }),
      fact: {
        version: { offsetsPartition: 0, offsetsOffset: version },
        detail: 'deleted',
        observedAtMs: atMs,
      },
    });
  const translate = (state: HealthState, group: string, version: number) =>
    state.apply({
      kind: 'translated',
      link,
      group,
      topic: 't',
      partition: 0,
      fact: {
        version: { offsetsPartition: 0, offsetsOffset: version },
        sourceOffset: version,
        targetOffset: version,
        outcome: TranslationOutcome.TRANSLATION_OUTCOME_PENDING,
        refusalReason: RefusalReason.REFUSAL_REASON_UNSPECIFIED,
        detail: '',
        attempts: 1,
        sourceCommitTimestampMs: 0,
      },
    });
  const listed = (state: HealthState) =>
    state
      .listGroups(
        {
          sourceCluster: '',
          targetCluster: '',
          groupPrefix: '',
          state: PartitionSyncState.PARTITION_SYNC_STATE_UNSPECIFIED,
        },
        undefined,
        1_000,
      )
      .map((g) => `${g.group}:${g.partitions.map((p) => p.partition).join(',')}`);

  it('shows a deleted group as DELETED for the window, then forgets it on the source and on every link', () => {
    const state = new HealthState([link], FORGET, () => 0);
    commit(state, 'gone', 0, 1, 1_000);
    translate(state, 'gone', 1);
    remove(state, 'gone', 2, 2_000);
    commit(state, 'stays', 0, 3, 2_000);
    expect(state.groupStatus(link, 'gone')?.partitions[0]?.state).toBe(
      PartitionSyncState.PARTITION_SYNC_STATE_DELETED,
    );
    expect(state.forgetDeleted(12_000)).toBe(0);
    expect(listed(state)).toEqual(['gone:0', 'stays:0']);
    expect(state.forgetDeleted(12_001)).toBe(1);
    expect(listed(state)).toEqual(['stays:0']);
    expect(state.groupStatus(link, 'gone')).toBeUndefined();
    expect(state.oldestPendingTranslationSinceMs(link)).toBeUndefined();
  });

  it('keeps a group that committed again after its deletion, and forgets a partition deleted alone', () => {
    const state = new HealthState([link], FORGET, () => 0);
    commit(state, 'back', 0, 1, 1_000);
    remove(state, 'back', 2, 1_000);
    commit(state, 'back', 0, 3, 1_500);
    commit(state, 'g', 0, 4, 1_000);
    commit(state, 'g', 1, 5, 1_000);
    remove(state, 'g', 6, 1_000, 1);
    expect(state.forgetDeleted(60_000)).toBe(0);
    expect(listed(state)).toEqual(['back:0', 'g:0']);
  });

  it("forgets a late translation's group that its source no longer knows, once it was quiet for the window", () => {
    const state = new HealthState([link], FORGET, () => 0);
    commit(state, 'gone', 0, 1, 1_000);
    remove(state, 'gone', 2, 1_000);
    state.forgetDeleted(20_000);
    translate(state, 'gone', 1);
    expect(listed(state)).toEqual(['gone:0']);
    expect(state.forgetDeleted(20_000)).toBe(1);
    expect(listed(state)).toEqual([]);
  });

  it('knows only the groups that exist after groups came and went (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(fc.nat(40), { maxLength: 20 }), { minLength: 1, maxLength: 10 }),
        (rounds) => {
          const state = new HealthState([link], FORGET, () => 0);
          const live = new Set<string>();
          let version = 0;
          let now = 0;
          for (const round of rounds) {
            for (const n of round) {
              const group = `g${n}`;
              version += 1;
              if (live.has(group)) {
                remove(state, group, version, now);
                live.delete(group);
              } else {
                commit(state, group, 0, version, now);
                live.add(group);
              }
            }
            now += 20_000;
            state.forgetDeleted(now);
          }
          expect(
            listed(state)
              .map((g) => g.split(':')[0])
              .sort(),
          ).toEqual([...live].sort());
        },
      ),
    );
  });
});
