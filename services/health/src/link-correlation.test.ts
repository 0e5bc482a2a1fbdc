import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LinkState, ServiceRole } from '@offsetsync/contracts';
import { correlateLink, type InstanceSighting, type LinkFlow } from './link-correlation.js';

const LINK = { source: 'a', target: 'b' };
const T = { stalledAfterMs: 30_000, laggingAboveMs: 5_000, missingAfterHeartbeats: 3 };
const NOW = 1_000_000;
const QUIET: LinkFlow = { oldestWaitingSinceMs: undefined, waitingPartitions: 0, lastEndToEndLagMs: 200 };

function instance(role: ServiceRole, lastHeartbeatMs = NOW, id = `${role}`): InstanceSighting {
  const collector = role === ServiceRole.SERVICE_ROLE_COLLECTOR;
  return {
    role,
    instanceId: id,
    sourceClusters: ['a'],
    targetCluster: collector ? '' : 'b',
    lastHeartbeatMs,
    intervalMs: 1_000,
    pending: 0,
  };
}
const C = ServiceRole.SERVICE_ROLE_COLLECTOR;
const TR = ServiceRole.SERVICE_ROLE_TRANSLATOR;
const CM = ServiceRole.SERVICE_ROLE_COMMITTER;

describe('correlateLink', () => {
  it('is DOWN with nothing heard, and says when each role was last heard', () => {
    expect(correlateLink(LINK, [], QUIET, T, NOW).state).toBe(LinkState.LINK_STATE_DOWN);
    const v = correlateLink(LINK, [instance(CM, NOW - 10_000, 'c-1')], QUIET, T, NOW);
    expect(v.state).toBe(LinkState.LINK_STATE_DOWN);
    expect(v.reason).toContain('committer c-1 last heard 10.0 s ago');
  });

  it('is SOURCE_ONLY with only a collector, naming what is missing', () => {
    const v = correlateLink(LINK, [instance(C)], QUIET, T, NOW);
    expect(v.state).toBe(LinkState.LINK_STATE_SOURCE_ONLY);
    expect(v.reason).toBe(
      'a collector runs for "a", but no translator and no committer runs for "b": commits are read and never applied',
    );
    expect(correlateLink(LINK, [instance(C), instance(TR)], QUIET, T, NOW).state).toBe(
      LinkState.LINK_STATE_SOURCE_ONLY,
    );
  });

  it('is TARGET_ONLY with a translator or committer but no collector', () => {
    const v = correlateLink(LINK, [instance(CM)], QUIET, T, NOW);
    expect(v.state).toBe(LinkState.LINK_STATE_TARGET_ONLY);
    expect(v.reason).toContain('a committer runs for "b", but no collector runs for "a"');
    expect(correlateLink(LINK, [instance(CM), instance(TR)], QUIET, T, NOW).reason).toContain(
      'a translator and a committer run for "b"',
    );
  });

  it('says so when a committer of the link only observes it, and only for that link', () => {
    const observer = { ...instance(CM), sourceClusters: ['a', 'x'], observedSourceClusters: ['a'] };
    const v = correlateLink(
      LINK,
      [instance(C), instance(TR), observer],
      { ...QUIET, lastEndToEndLagMs: undefined },
      T,
      NOW,
    );
    expect(v).toMatchObject({ state: LinkState.LINK_STATE_HEALTHY, observing: true });
    expect(v.reason).toBe(
      'collector, translator and committer run; the link observes: nothing is committed on "b"',
    );
    const other = correlateLink(
      { source: 'x', target: 'b' },
      [{ ...instance(C), sourceClusters: ['x'] }, { ...instance(TR), sourceClusters: ['x'] }, observer],
      QUIET,
      T,
      NOW,
    );
    expect(other.observing).toBe(false);
    expect(other.reason).not.toContain('observes');
  });

  it('is HEALTHY, STALLED or LAGGING with every role running, by the flow of events', () => {
    const all = [instance(C), instance(TR), instance(CM)];
    expect(correlateLink(LINK, all, QUIET, T, NOW).state).toBe(LinkState.LINK_STATE_HEALTHY);
    const stalled = correlateLink(
      LINK,
      all,
      { oldestWaitingSinceMs: NOW - 31_000, waitingPartitions: 2, lastEndToEndLagMs: 100 },
      T,
      NOW,
    );
    expect(stalled.state).toBe(LinkState.LINK_STATE_STALLED);
    expect(stalled.reason).toContain('2 partition(s)');
    expect(correlateLink(LINK, all, { ...QUIET, lastEndToEndLagMs: 6_000 }, T, NOW).state).toBe(
      LinkState.LINK_STATE_LAGGING,
    );
    expect(
      correlateLink(LINK, all, { ...QUIET, oldestWaitingSinceMs: NOW - 6_000, waitingPartitions: 1 }, T, NOW)
        .state,
    ).toBe(LinkState.LINK_STATE_LAGGING);
  });

  it('names in its reason every credential or permission problem an instance of the link reports', () => {
    const refused = {
      ...instance(CM, NOW, 'committer-1'),
      problems: [
        {
          code: 'NOT_AUTHORIZED',
          detail: 'missing ACL ALLOW READ on GROUP:app',
          sinceMs: 1,
          resource: 'GROUP:app',
        },
        { code: 'KAFKA_UNREACHABLE', detail: 'down', sinceMs: 1, resource: '' },
      ],
    };
    const verdict = correlateLink(LINK, [instance(C), instance(TR), refused], QUIET, T, NOW);
    expect(verdict.state).toBe(LinkState.LINK_STATE_HEALTHY);
    expect(verdict.reason).toMatch(/; committer committer-1 reports NOT_AUTHORIZED on GROUP:app$/);
    const healthy = correlateLink(LINK, [instance(C), instance(TR), instance(CM)], QUIET, T, NOW);
    expect(healthy.reason).not.toMatch(/reports/);
  });

  it('ignores instances of other links and instances past the missed-heartbeat limit', () => {
    const other = { ...instance(CM), targetCluster: 'z' };
    expect(correlateLink(LINK, [instance(C), instance(TR), other], QUIET, T, NOW).state).toBe(
      LinkState.LINK_STATE_SOURCE_ONLY,
    );
    const stale = instance(CM, NOW - 3_001);
    expect(correlateLink(LINK, [instance(C), instance(TR), stale], QUIET, T, NOW).state).toBe(
      LinkState.LINK_STATE_SOURCE_ONLY,
    );
    expect(
      correlateLink(LINK, [instance(C), instance(TR), instance(CM, NOW - 3_000)], QUIET, T, NOW).state,
    ).toBe(LinkState.LINK_STATE_HEALTHY);
  });

  it('depends only on which roles are alive, never on their order or count (property)', () => {
    const sighting = fc.record({
      role: fc.constantFrom(C, TR, CM, ServiceRole.SERVICE_ROLE_HEALTH),
      instanceId: fc.string({ maxLength: 4 }),
      sourceClusters: fc.constant(['a']),
      targetCluster: fc.constant('b'),
      lastHeartbeatMs: fc.integer({ min: NOW - 10_000, max: NOW }),
      intervalMs: fc.constant(1_000),
      pending: fc.nat(10),
    });
    fc.assert(
      fc.property(fc.array(sighting, { maxLength: 8 }), (instances) => {
        const alive = new Set(
          instances
            .filter((i) => NOW - i.lastHeartbeatMs <= 3_000 && i.role !== ServiceRole.SERVICE_ROLE_HEALTH)
            .map((i) => i.role),
        );
        const v = correlateLink(LINK, instances, QUIET, T, NOW);
        const reversed = correlateLink(LINK, [...instances].reverse(), QUIET, T, NOW);
        expect(reversed.state).toBe(v.state);
        const expected =
          alive.size === 0
            ? LinkState.LINK_STATE_DOWN
            : !alive.has(C)
              ? LinkState.LINK_STATE_TARGET_ONLY
              : alive.size < 3
                ? LinkState.LINK_STATE_SOURCE_ONLY
                : LinkState.LINK_STATE_HEALTHY;
        expect(v.state).toBe(expected);
        expect(v.reason.length).toBeGreaterThan(0);
      }),
    );
  });
});
