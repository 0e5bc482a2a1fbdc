import { describe, expect, it } from 'vitest';
import { loadConfig, targetTopic } from '@offsetsync/runtime';
import { sandboxServiceConfig } from './sandbox-services.js';
import {
  copyTopicName,
  ownRecordCount,
  SANDBOX_SOURCE,
  SANDBOX_TARGETS,
  sandboxClusters,
} from './sandbox-targets.js';

const servers = {
  kafka: { source: '127.0.0.1:1', target: '127.0.0.1:2', cloud: '127.0.0.1:3' },
  natsUrl: 'nats://127.0.0.1:4',
  subjectPrefix: 'sandbox',
  healthPort: 5,
};

describe('the sandbox targets', () => {
  it('are target with the same topic names and cloud with MirrorMaker 2 default names', () => {
    expect(sandboxClusters()).toEqual(['source', 'target', 'cloud']);
    expect(SANDBOX_TARGETS.map((t) => copyTopicName(t, 'demo-orders'))).toEqual([
      'demo-orders',
      'source.demo-orders',
    ]);
  });

  it("have offsetsync's links look for each copy where its MirrorMaker writes it", () => {
    const config = loadConfig({ env: {}, overrides: sandboxServiceConfig(servers, SANDBOX_TARGETS) });
    for (const target of SANDBOX_TARGETS) {
      const link = config.links.find((l) => l.target === target.cluster);
      expect(link?.source, target.cluster).toBe(SANDBOX_SOURCE);
      expect(targetTopic(link?.topicNames, SANDBOX_SOURCE, 'demo-orders')).toEqual({
        kind: 'replicated',
        topic: copyTopicName(target, 'demo-orders'),
      });
    }
  });

  it('hold a different number of records of their own on every partition, so no two offsets agree', () => {
    for (let partition = 0; partition < 64; partition++) {
      const counts = SANDBOX_TARGETS.map((t) => ownRecordCount(t, partition));
      expect(counts.every((c) => c > 0)).toBe(true);
      expect(new Set(counts).size, `partition ${partition}: ${counts.join(', ')}`).toBe(counts.length);
    }
    expect(SANDBOX_TARGETS.map((t) => ownRecordCount(t, 2))).toEqual([174, 372]);
  });
});
