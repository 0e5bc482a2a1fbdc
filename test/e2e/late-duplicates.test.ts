// A copier writes a run of records a second time after offsetsync translated a group's commit there, and
// the group does not commit again (the application stopped, or the source is gone): the translation is
// revised forward, so that a consumer moved to the target reads no copy of a record it consumed and misses
// none it has not. Without revisions the group would resume before the second copies and read them again.
import { describe, expect, inject, it, onTestFinished } from 'vitest';
import { startService } from '@offsetsync/harness';
import { waitFor } from '../infra/wait.js';
import { testConfig } from '../support/config.js';
import { connectedAdmin, kafkaClient, testAdapter } from '../support/kafka-clients.js';
import { uniqueName } from '../support/names.js';

const testbed = inject('testbed');
const SOURCE_RECORDS = 1_000;
/** The copier has copied this many records when the group commits. */
const COPIED = 300;
const COMMITTED = 250;
/** Where the copier starts again after its "restart": ten records before the commit. */
const REWRITE_FROM = 240;

const record = (base: number, i: number) => ({
  key: `k${i}`,
  value: `id:${i}`,
  timestamp: String(base + i),
});

describe('duplicates written after the translation', () => {
  it('revise the translation forward while the group does not commit again: 0 replayed, 0 skipped', async () => {
    const topic = uniqueName('late-dup');
    const group = uniqueName('late-dup-g');
    const base = Date.now() - 10 * 60_000;
    for (const cluster of [testbed.source, testbed.target]) {
      const admin = await connectedAdmin(kafkaClient(cluster.bootstrapServers));
      await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
    }
    const producerOf = async (bootstrapServers: string) => {
      const producer = kafkaClient(bootstrapServers).producer();
      await producer.connect();
      onTestFinished(() => producer.disconnect());
      return producer;
    };
    const sourceProducer = await producerOf(testbed.source.bootstrapServers);
    await sourceProducer.send({
      topic,
      messages: Array.from({ length: SOURCE_RECORDS }, (_, i) => record(base, i)),
    });
    // The copier, by hand: the first COPIED records, once.
    const copier = await producerOf(testbed.target.bootstrapServers);
    await copier.send({ topic, messages: Array.from({ length: COPIED }, (_, i) => record(base, i)) });

    const config = testConfig(testbed, {
      collector: { cluster: 'source', groups: { include: [`^${group}$`] }, fetchMaxWaitMs: '20ms' },
      translator: {
        target: 'target',
        pendingRetryMinMs: '100ms',
        pendingRetryMaxMs: '500ms',
        duplicateWindow: 100,
        revisionIntervalMs: '200ms',
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
    const targetCommit = async () =>
      (await target.fetchCommittedOffsets(group, [topic])).find((o) => o.partition === 0)?.offset;

    const [committed] = await source.commitOffsets(group, [
      { topic, partition: 0, offset: COMMITTED, metadata: null },
    ]);
    expect(committed?.error).toBeUndefined();
    // Only 50 records follow the last consumed one on the target: the duplicate window (100 records, read
    // twice over after the copy) is not full, so the translation stays open to revision.
    await waitFor(
      'the first translation',
      async () => ((await targetCommit()) === COMMITTED ? true : undefined),
      {
        timeoutMs: 60_000,
        intervalMs: 100,
      },
    );

    // The copier restarts from an older position and writes source 240..299 again: target 300..359.
    await copier.send({
      topic,
      messages: Array.from({ length: COPIED - REWRITE_FROM }, (_, k) => record(base, REWRITE_FROM + k)),
    });
    // After the second copy of record 249 (target 309): the group resumes at the second copy of 250.
    const resumeAt = COPIED + (COMMITTED - REWRITE_FROM);
    await waitFor(
      'the revised translation',
      async () => ((await targetCommit()) === resumeAt ? true : undefined),
      {
        timeoutMs: 60_000,
        intervalMs: 100,
      },
    );

    // A consumer starting there reads records 250..299, each once: nothing it consumed, nothing missed.
    const read: string[] = [];
    let offset = resumeAt;
    while (offset < COPIED + (COPIED - REWRITE_FROM)) {
      const [answer] = await target.fetchRecords([{ topic, partition: 0, offset }]);
      if (answer?.error) throw answer.error;
      for (const r of answer!.records) read.push(r.value!.toString());
      offset = answer!.nextOffset;
    }
    expect(read).toEqual(Array.from({ length: COPIED - COMMITTED }, (_, k) => `id:${COMMITTED + k}`));
  });
});
