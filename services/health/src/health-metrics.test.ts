import { describe, expect, it } from 'vitest';
import { LinkState, LinkStatus, ServiceRole } from '@offsetsync/contracts';
import {
  instanceSamples,
  linkLagSamples,
  linkStateSamples,
  pendingTranslationSamples,
} from './health-metrics.js';
import type { InstanceSighting } from './link-correlation.js';

const T = {
  stalledAfterMs: 30_000,
  laggingAboveMs: 5_000,
  missingAfterHeartbeats: 3,
  forgetLinkAfterMs: 600_000,
};
const NOW = 100_000_000;

function instance(
  role: ServiceRole,
  id: string,
  lastHeartbeatMs: number,
  clusters: { sources?: string[]; target?: string } = {},
): InstanceSighting {
  return {
    role,
    instanceId: id,
    sourceClusters: clusters.sources ?? ['a'],
    targetCluster: role === ServiceRole.SERVICE_ROLE_COLLECTOR ? '' : (clusters.target ?? 'b'),
    lastHeartbeatMs,
    intervalMs: 1_000,
    pending: 0,
  };
}

describe('linkStateSamples', () => {
  it('gives each link 1 for its state and 0 for the five others', () => {
    const samples = linkStateSamples([
      LinkStatus.fromPartial({
        sourceCluster: 'a',
        targetCluster: 'b',
        state: LinkState.LINK_STATE_SOURCE_ONLY,
      }),
    ]);
    expect(samples).toHaveLength(6);
    expect(samples.filter((s) => s.value === 1)).toEqual([
      { value: 1, attributes: { source: 'a', target: 'b', state: 'SOURCE_ONLY' } },
    ]);
    expect(samples.map((s) => s.attributes.state).sort()).toEqual(
      ['DOWN', 'HEALTHY', 'LAGGING', 'SOURCE_ONLY', 'STALLED', 'TARGET_ONLY'].sort(),
    );
  });

  it('gives a link of no known state only zeros', () => {
    const samples = linkStateSamples([LinkStatus.fromPartial({ sourceCluster: 'a', targetCluster: 'b' })]);
    expect(samples.every((s) => s.value === 0)).toBe(true);
  });
});

describe('linkLagSamples', () => {
  it('reports the lag in seconds, and nothing for a link that applied nothing yet', () => {
    expect(
      linkLagSamples([
        LinkStatus.fromPartial({ sourceCluster: 'a', targetCluster: 'b', endToEndLagMs: 1_500 }),
        LinkStatus.fromPartial({ sourceCluster: 'a', targetCluster: 'c', endToEndLagMs: -1 }),
      ]),
    ).toEqual([{ value: 1.5, attributes: { source: 'a', target: 'b' } }]);
  });
});

describe('pendingTranslationSamples', () => {
  it('reports the age of the oldest pending translation, 0 for a link with none', () => {
    const oldest = new Map([['a>b', NOW - 90_000]]);
    expect(
      pendingTranslationSamples(
        [
          { source: 'a', target: 'b' },
          { source: 'a', target: 'c' },
        ],
        (l) => oldest.get(`${l.source}>${l.target}`),
        NOW,
      ),
    ).toEqual([
      { value: 90, attributes: { source: 'a', target: 'b' } },
      { value: 0, attributes: { source: 'a', target: 'c' } },
    ]);
  });
});

describe('instanceSamples', () => {
  const C = ServiceRole.SERVICE_ROLE_COLLECTOR;
  const CM = ServiceRole.SERVICE_ROLE_COMMITTER;

  it('is 1 for an instance heard from, 0 once missingAfterHeartbeats intervals passed, with the age', () => {
    const { up, heartbeatAge } = instanceSamples(
      [instance(C, 'col-1', NOW - 1_000), instance(CM, 'com-1', NOW - 3_001)],
      T,
      NOW,
    );
    expect(up).toEqual([
      { value: 1, attributes: { role: 'collector', kafka_cluster: 'a', instance_id: 'col-1' } },
      { value: 0, attributes: { role: 'committer', kafka_cluster: 'b', instance_id: 'com-1' } },
    ]);
    expect(heartbeatAge.map((s) => s.value)).toEqual([1, 3.001]);
  });

  it('leaves out a stopped instance once another of its role runs for the same clusters (a replaced pod)', () => {
    const { up } = instanceSamples(
      [
        instance(CM, 'old', NOW - 60_000),
        instance(CM, 'new', NOW - 500),
        // Another target: not replaced by `new`.
        instance(CM, 'other', NOW - 60_000, { target: 'c' }),
      ],
      T,
      NOW,
    );
    expect(up.map((s) => [s.attributes.instance_id, s.value])).toEqual([
      ['new', 1],
      ['other', 0],
    ]);
  });

  it('forgets an instance not heard from for more than a day', () => {
    const { up, heartbeatAge } = instanceSamples(
      [instance(C, 'gone', NOW - 24 * 60 * 60 * 1000 - 1)],
      T,
      NOW,
    );
    expect(up).toEqual([]);
    expect(heartbeatAge).toEqual([]);
  });

  it('leaves health instances out', () => {
    expect(instanceSamples([instance(ServiceRole.SERVICE_ROLE_HEALTH, 'h', NOW)], T, NOW).up).toEqual([]);
  });
});
