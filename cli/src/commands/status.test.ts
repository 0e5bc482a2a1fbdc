import { describe, expect, it } from 'vitest';
import { GroupStatus, LinkState, LinkStatus, PartitionSyncState, ServiceRole } from '@offsetsync/contracts';
import { dispatch } from '../dispatch.js';
import { formatReport, groupRows, linkRow, parsePartitionState } from './status-format.js';
import { commands } from './index.js';

const link = LinkStatus.fromPartial({
  sourceCluster: 'dc1',
  targetCluster: 'cloud',
  state: LinkState.LINK_STATE_SOURCE_ONLY,
  reason: 'a collector runs for "dc1", but no committer runs for "cloud"',
  endToEndLagMs: -1,
  instances: [{ role: ServiceRole.SERVICE_ROLE_COLLECTOR, instanceId: 'c-1' }],
});
const group = GroupStatus.fromPartial({
  sourceCluster: 'dc1',
  targetCluster: 'cloud',
  group: 'orders',
  partitions: [
    {
      topic: 'o',
      partition: 2,
      sourceOffset: 150,
      targetOffset: 50,
      exact: true,
      lagMs: 1_000,
      replayIfMoved: 110,
      state: PartitionSyncState.PARTITION_SYNC_STATE_PENDING,
      reason: 'translated to 160; waiting for the committer',
    },
  ],
});

describe('offsetsync status', () => {
  it('turns the API answers into JSON rows with state names and every field', () => {
    expect(linkRow(link)).toMatchObject({ source: 'dc1', target: 'cloud', state: 'SOURCE_ONLY', pending: 0 });
    expect(linkRow(link).instances).toEqual([
      { role: 'collector', instanceId: 'c-1', lastHeartbeatMs: 0, softwareVersion: '' },
    ]);
    expect(groupRows(group)).toEqual([
      {
        source: 'dc1',
        target: 'cloud',
        group: 'orders',
        topic: 'o',
        targetTopic: 'o',
        partition: 2,
        sourceOffset: 150,
        targetOffset: 50,
        exact: true,
        lagMs: 1_000,
        replayIfMoved: 110,
        // Unset by health (as one older than the fields would): unknown, and nothing observed.
        skipIfMoved: -1,
        wouldCommitOffset: -1,
        state: 'PENDING',
        reason: 'translated to 160; waiting for the committer',
      },
    ]);
  });

  it('prints aligned tables for people', () => {
    const text = formatReport({
      overallState: 'SOURCE_ONLY',
      links: [linkRow(link)],
      groups: groupRows(group),
    });
    expect(text).toContain('Overall: SOURCE_ONLY');
    expect(text).toMatch(/dc1 -> cloud\s+SOURCE_ONLY\s+-\s+0\s+collector:c-1/);
    expect(text).toMatch(/orders\s+o\/2\s+150\s+50\s+yes\s+1000 ms\s+110\s+-\s+PENDING/);
  });

  it('shows in parentheses what a link that observes would commit, with its replay and skip', () => {
    const observed = GroupStatus.fromPartial({
      ...group,
      partitions: [
        {
          ...group.partitions[0],
          targetOffset: -1,
          wouldCommitOffset: 160,
          replayIfMoved: 0,
          skipIfMoved: 0,
          lagMs: -1,
          state: PartitionSyncState.PARTITION_SYNC_STATE_OBSERVED,
          reason: 'the link observes',
        },
      ],
    });
    expect(groupRows(observed)[0]).toMatchObject({
      targetOffset: -1,
      wouldCommitOffset: 160,
      skipIfMoved: 0,
    });
    const text = formatReport({ overallState: 'HEALTHY', links: [], groups: groupRows(observed) });
    expect(text).toMatch(/orders\s+o\/2\s+150\s+\(160\)\s+yes\s+-\s+0\s+0\s+OBSERVED\s+the link observes/);
  });

  it('shows both names of a topic the link renames, in JSON and in the table', () => {
    const renamed = GroupStatus.fromPartial({
      ...group,
      partitions: [{ ...group.partitions[0], targetTopic: 'dc1.o' }],
    });
    expect(groupRows(renamed)[0]).toMatchObject({ topic: 'o', targetTopic: 'dc1.o' });
    const text = formatReport({ overallState: 'HEALTHY', links: [], groups: groupRows(renamed) });
    expect(text).toMatch(/orders\s+o -> dc1\.o\/2\s+150\s+50/);
  });

  it('accepts state names in any spelling and rejects bad command lines with exit code 64', async () => {
    expect(parsePartitionState('skipped-active-on-target')).toBe(
      PartitionSyncState.PARTITION_SYNC_STATE_SKIPPED_ACTIVE_ON_TARGET,
    );
    expect(parsePartitionState('unspecified')).toBeUndefined();
    const err: string[] = [];
    const io = { stdout: () => undefined, stderr: (t: string) => err.push(t) };
    await expect(dispatch(['status', '--address', 'nope'], commands, io)).resolves.toBe(64);
    await expect(dispatch(['status', '--state', 'happy'], commands, io)).resolves.toBe(64);
    expect(err.join('')).toContain('--state: unknown state "happy"');
  });

  it('exits 69 when the health API cannot be reached', async () => {
    const err: string[] = [];
    const io = { stdout: () => undefined, stderr: (t: string) => err.push(t) };
    await expect(
      dispatch(['status', '--address', '127.0.0.1:1', '--timeout', '500'], commands, io),
    ).resolves.toBe(69);
    expect(err.join('')).toContain('cannot ask the health service at 127.0.0.1:1');
  });
});
