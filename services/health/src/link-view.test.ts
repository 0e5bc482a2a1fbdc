// The published view of the links: grpc.health.v1 names, watchers, and the log line of a state change.
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { InstanceInfo, LinkState, LinkStatus, ServiceRole } from '@offsetsync/contracts';
import { HealthStatusBoard, ServingStatus } from '@offsetsync/runtime';
import { LinkView } from './link-view.js';

const LINK = { source: 'a', target: 'b' };

function status(state: LinkState, instances: string[] = ['c-1']): LinkStatus {
  return LinkStatus.fromPartial({
    sourceCluster: 'a',
    targetCluster: 'b',
    state,
    reason: `reason of ${state}`,
    instances: instances.map((instanceId) =>
      InstanceInfo.fromPartial({ role: ServiceRole.SERVICE_ROLE_COLLECTOR, instanceId }),
    ),
  });
}

function view() {
  const lines: Record<string, unknown>[] = [];
  const logger = pino(
    { level: 'info' },
    { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) },
  );
  const board = new HealthStatusBoard();
  const links = new LinkView(board, logger);
  const heard: LinkStatus[] = [];
  links.onLinkChange((s) => heard.push(s));
  return { links, board, lines, heard };
}

describe('LinkView', () => {
  it('drops a link the evaluation no longer reports, from the list and from grpc.health.v1', () => {
    const { links, board, lines } = view();
    const other = { source: 'a', target: 'c' };
    links.publish(
      [
        { link: LINK, status: status(LinkState.LINK_STATE_HEALTHY) },
        { link: other, status: { ...status(LinkState.LINK_STATE_DOWN), targetCluster: 'c' } },
      ],
      1_000,
    );
    expect(board.get('offsetsync.link/a/c')).toBe(ServingStatus.NOT_SERVING);
    links.publish([{ link: LINK, status: status(LinkState.LINK_STATE_HEALTHY) }], 2_000);
    expect(links.links().map((l) => l.targetCluster)).toEqual(['b']);
    expect(board.get('offsetsync.link/a/c')).toBeUndefined();
    expect(board.get('offsetsync.link/a/b')).toBe(ServingStatus.SERVING);
    expect(lines.at(-1)).toMatchObject({
      link: 'offsetsync.link/a/c',
      msg: expect.stringContaining('no longer reported') as unknown,
    });
  });

  it('logs a change of link state with the state by name', () => {
    const { links, lines } = view();
    links.publish([{ link: LINK, status: status(LinkState.LINK_STATE_SOURCE_ONLY) }], 1_000);
    expect(lines).toEqual([
      expect.objectContaining({
        msg: 'link state changed',
        link: 'offsetsync.link/a/b',
        state: 'SOURCE_ONLY',
        reason: `reason of ${LinkState.LINK_STATE_SOURCE_ONLY}`,
      }),
    ]);
    links.publish([{ link: LINK, status: status(LinkState.LINK_STATE_SOURCE_ONLY) }], 2_000);
    links.publish([{ link: LINK, status: status(LinkState.LINK_STATE_HEALTHY) }], 3_000);
    expect(lines.map((l) => l.state)).toEqual(['SOURCE_ONLY', 'HEALTHY']);
  });

  it('tells watchers of a change of state or of running instances, keeping when the state changed', () => {
    const { links, board, heard } = view();
    expect(links.publish([{ link: LINK, status: status(LinkState.LINK_STATE_HEALTHY) }], 1_000)).toBe(true);
    expect(links.publish([{ link: LINK, status: status(LinkState.LINK_STATE_HEALTHY) }], 2_000)).toBe(true);
    links.publish([{ link: LINK, status: status(LinkState.LINK_STATE_HEALTHY, ['c-1', 'c-2']) }], 3_000);
    expect(heard.map((s) => s.changedAtMs)).toEqual([1_000, 1_000]);
    expect(board.get('offsetsync.link/a/b')).toBe(ServingStatus.SERVING);

    expect(links.publish([{ link: LINK, status: status(LinkState.LINK_STATE_STALLED) }], 4_000)).toBe(false);
    expect(heard.at(-1)?.changedAtMs).toBe(4_000);
    expect(board.get('offsetsync.link/a/b')).toBe(ServingStatus.NOT_SERVING);
    expect(links.links()).toEqual([heard.at(-1)]);
  });
});
