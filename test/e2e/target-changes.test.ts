// The target topic changes under a running translator: records removed by DeleteRecords, the topic
// deleted and recreated and copied again by a replicator that writes its own way. Every offset committed
// on the target stays within the target's new bounds and is never past the copy of the source position:
// cached answers and learned positions are checked against the target before they are used.
import { describe, expect, inject, it, onTestFinished } from 'vitest';
import { startReplicator, startService, type TestReplicator } from '@offsetsync/harness';
import { waitFor } from '../infra/wait.js';
import { testConfig } from '../support/config.js';
import { connectedAdmin, kafkaClient, testAdapter } from '../support/kafka-clients.js';
import { uniqueName } from '../support/names.js';

const testbed = inject('testbed');
const RECORDS = 1_000;

async function sourceTopic(topic: string): Promise<void> {
  const kafka = kafkaClient(testbed.source.bootstrapServers);
  const admin = await connectedAdmin(kafka);
  await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
  const producer = kafka.producer();
  await producer.connect();
  onTestFinished(() => producer.disconnect());
  const base = Date.now() - 10 * 60_000;
  await producer.send({
    topic,
    messages: Array.from({ length: RECORDS }, (_, i) => ({
      key: `k${i % 7}`,
      value: `id:${i}`,
      timestamp: String(base + Math.floor(i / 4)),
    })),
  });
}

async function setUp(prefix: string) {
  const topic = uniqueName(prefix);
  const group = uniqueName(`${prefix}-g`);
  await sourceTopic(topic);
  const config = testConfig(testbed, {
    collector: { cluster: 'source', groups: { include: [`^${group}$`] }, fetchMaxWaitMs: '20ms' },
    // A small duplicate window: a commit within it of a truncated log start goes to the log start
    // (INEXACT, an earlier copy may have been removed); the commits past the cut here are further away.
    translator: {
      target: 'target',
      pendingRetryMinMs: '100ms',
      pendingRetryMaxMs: '500ms',
      duplicateWindow: 100,
    },
    committer: { target: 'target' },
  });
  await Promise.all([
    startService('collector', config),
    startService('translator', config),
    startService('committer', config),
  ]);
  const source = testAdapter(testbed.source.bootstrapServers);
  const target = testAdapter(testbed.target.bootstrapServers);
  return {
    topic,
    group,
    target,
    async commitOnSource(offset: number): Promise<void> {
      const [answer] = await source.commitOffsets(group, [{ topic, partition: 0, offset, metadata: null }]);
      if (answer?.error) throw answer.error;
    },
    async targetCommit(): Promise<number | undefined> {
      const offsets = await target.fetchCommittedOffsets(group, [topic]);
      return offsets.find((o) => o.partition === 0)?.offset;
    },
  };
}

type Bed = Awaited<ReturnType<typeof setUp>>;

/**
 * Waits until the group's target offset is a copy of the source record at `sourceOffset`, or (when that
 * record is gone from the target) the target's log start; checks it is within the bounds and never past
 * any copy of an unconsumed record that is still there.
 */
async function settledAt(b: Bed, replicator: TestReplicator, sourceOffset: number): Promise<number> {
  const committed = await waitFor(
    `target offset for source offset ${sourceOffset}`,
    async () => {
      const [bounds] = await b.target.partitionBounds([{ topic: b.topic, partition: 0 }]);
      if (bounds === undefined || !('highWatermark' in bounds)) return undefined;
      const offset = await b.targetCommit();
      if (offset === undefined) return undefined;
      const copies = replicator.targetOffsetsOf(0, sourceOffset).filter((o) => o >= bounds.logStartOffset);
      const expected = copies.length > 0 ? copies : [bounds.logStartOffset];
      return expected.includes(offset) ? { offset, bounds } : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 100 },
  );
  const { offset, bounds } = committed;
  expect(offset).toBeGreaterThanOrEqual(bounds.logStartOffset);
  expect(offset).toBeLessThanOrEqual(bounds.highWatermark);
  // Never past the counterpart: every unconsumed source record still on the target has a copy at or after it.
  for (let s = sourceOffset; s < RECORDS; s++) {
    const readable = replicator.targetOffsetsOf(0, s).filter((o) => o >= bounds.logStartOffset);
    if (readable.length > 0) expect(Math.max(...readable), `source ${s}`).toBeGreaterThanOrEqual(offset);
  }
  return offset;
}

describe('target changes under the translator', () => {
  it('keeps every committed offset within the bounds of a target truncated by DeleteRecords', async () => {
    const b = await setUp('truncated');
    const replicator = await startReplicator({
      source: testbed.source,
      target: testbed.target,
      topic: b.topic,
      maxBatchRecords: 50,
      duplicates: { probability: 0.3, seed: 3, maxRunLength: 60, restartProbability: 0.05 },
    });
    await replicator.waitUntilCaughtUp(60_000);

    await b.commitOnSource(300);
    await settledAt(b, replicator, 300);
    // Remove everything before the last copy of source offset 600: the group's records are gone.
    const cut = Math.max(...replicator.targetOffsetsOf(0, 600));
    const admin = await connectedAdmin(kafkaClient(testbed.target.bootstrapServers));
    await admin.fetchTopicMetadata({ topics: [b.topic] });
    await admin.deleteTopicRecords({ topic: b.topic, partitions: [{ partition: 0, offset: String(cut) }] });

    // A newer source commit whose records were removed: the target's log start, never below it.
    await b.commitOnSource(310);
    expect(await settledAt(b, replicator, 310)).toBe(cut);
    // The same position again, and one past the cut: from the new log start on, exact again.
    await b.commitOnSource(300);
    expect(await settledAt(b, replicator, 300)).toBe(cut);
    await b.commitOnSource(800);
    await settledAt(b, replicator, 800);
  });

  it('finds the new copies after the target topic was deleted and recreated, not the remembered ones', async () => {
    const b = await setUp('recreated');
    const first = await startReplicator({
      source: testbed.source,
      target: testbed.target,
      topic: b.topic,
      maxBatchRecords: 50,
      duplicates: { probability: 0.3, seed: 8, maxRunLength: 60 },
    });
    await first.waitUntilCaughtUp(60_000);
    // The translator learns positions and caches answers here.
    for (const offset of [200, 500, 520]) {
      await b.commitOnSource(offset);
      await settledAt(b, first, offset);
    }
    await first.stop();

    const admin = await connectedAdmin(kafkaClient(testbed.target.bootstrapServers));
    await admin.deleteTopics({ topics: [b.topic] });
    await waitFor(
      'the target topic to be gone',
      async () => ((await admin.listTopics()).includes(b.topic) ? undefined : true),
      { timeoutMs: 30_000, intervalMs: 200 },
    );
    // Copied again, its own way: some records of its own first, then other duplicates, so that every
    // source record sits at another target offset than before.
    const second = await startReplicator({
      source: testbed.source,
      target: testbed.target,
      topic: b.topic,
      maxBatchRecords: 30,
      duplicates: { probability: 0.5, seed: 21, maxRunLength: 40 },
    });
    await second.waitUntilCaughtUp(60_000);
    expect(second.targetOffsetsOf(0, 500)).not.toEqual(first.targetOffsetsOf(0, 500));

    // The same source positions (newer versions): the cached answers no longer hold, nor the learned points.
    for (const offset of [500, 520, 700]) {
      await b.commitOnSource(offset);
      await settledAt(b, second, offset);
    }
  });
});
