// Which links health reports: configured ones always, learnt ones while their instances run, and a link
// removed from a reloaded config once its instances are gone.
import { describe, expect, it } from 'vitest';
import { LinkState, PartitionSyncState, ServiceRole } from '@offsetsync/contracts';
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
