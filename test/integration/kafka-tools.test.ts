// Kafka's own Java tools run against the test bed: the KIP-848 consumer groups and admin deletions
// that kafkajs cannot make.
import type { Admin } from 'kafkajs';
import { describe, expect, inject, it } from 'vitest';
import {
  assertToolSucceeded,
  consoleConsumer,
  consoleProducer,
  consumerGroupsCommand,
} from '../infra/kafka-tools.js';
import { connectedAdmin, kafkaClient } from '../support/kafka-clients.js';
import { uniqueName } from '../support/names.js';

const testbed = inject('testbed');
const bootstrap = testbed.source.bootstrapServers;

/** Committed offsets of `group` on `topic` by partition; '-1' where there is none. */
async function committedOffsets(admin: Admin, group: string, topic: string): Promise<Record<number, string>> {
  const [result] = await admin.fetchOffsets({ groupId: group, topics: [topic] });
  return Object.fromEntries((result?.partitions ?? []).map((p) => [p.partition, p.offset]));
}

/** A fresh topic holding `perPartition` records in each partition, values `<topic>-<partition>-<i>`. */
async function topicWithRecords(admin: Admin, partitions: number, perPartition: number): Promise<string> {
  const topic = uniqueName('tools');
  await admin.createTopics({ topics: [{ topic, numPartitions: partitions }], waitForLeaders: true });
  const producer = kafkaClient(bootstrap).producer();
  await producer.connect();
  try {
    await producer.send({
      topic,
      messages: Array.from({ length: partitions * perPartition }, (_, i) => ({
        partition: i % partitions,
        value: `${topic}-${i % partitions}-${Math.floor(i / partitions)}`,
      })),
    });
  } finally {
    await producer.disconnect();
  }
  return topic;
}

/** The group's type as `kafka-consumer-groups --list --type` prints it (Classic, Consumer, ...). */
async function groupType(group: string): Promise<string | undefined> {
  const result = assertToolSucceeded(await consumerGroupsCommand(bootstrap, ['--list', '--type']));
  const row = result.stdout
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .find(([name]) => name === group);
  return row?.[1];
}

describe('Kafka Java tools on the test bed', () => {
  it('console consumer with group.protocol=consumer makes a KIP-848 group that commits on exit', async () => {
    const admin = await connectedAdmin(kafkaClient(bootstrap));
    const topic = await topicWithRecords(admin, 2, 3);
    const group = uniqueName('tools-kip848');

    const consumed = assertToolSucceeded(
      await consoleConsumer({ bootstrap, topic, group, groupProtocol: 'consumer', maxMessages: 6 }),
    );

    expect(consumed.values.sort()).toEqual(
      [0, 1].flatMap((p) => [0, 1, 2].map((i) => `${topic}-${p}-${i}`)).sort(),
    );
    expect(await committedOffsets(admin, group, topic)).toEqual({ 0: '3', 1: '3' });
    expect(await groupType(group)).toBe('Consumer');
    const described = assertToolSucceeded(
      await consumerGroupsCommand(bootstrap, ['--describe', '--group', group]),
    );
    expect(described.stdout).toMatch(new RegExp(`${group}\\s+${topic}\\s+0\\s+3\\s+3\\s+0`));
  });

  it("deletes one topic of a group's offsets, then the group", async () => {
    const admin = await connectedAdmin(kafkaClient(bootstrap));
    const kept = await topicWithRecords(admin, 1, 2);
    const dropped = await topicWithRecords(admin, 2, 2);
    const group = uniqueName('tools-delete');
    for (const [topic, records] of [
      [kept, 2],
      [dropped, 4],
    ] as const) {
      assertToolSucceeded(
        await consoleConsumer({ bootstrap, topic, group, groupProtocol: 'consumer', maxMessages: records }),
      );
    }
    expect(await committedOffsets(admin, group, dropped)).toEqual({ 0: '2', 1: '2' });

    assertToolSucceeded(
      await consumerGroupsCommand(bootstrap, ['--delete-offsets', '--group', group, '--topic', dropped]),
    );
    expect(await committedOffsets(admin, group, dropped)).toEqual({ 0: '-1', 1: '-1' });
    expect(await committedOffsets(admin, group, kept)).toEqual({ 0: '2' });

    assertToolSucceeded(await consumerGroupsCommand(bootstrap, ['--delete', '--group', group]));
    expect(await committedOffsets(admin, group, kept)).toEqual({ 0: '-1' });
    expect(await groupType(group)).toBeUndefined();
  });

  it('resets a group to an offset', async () => {
    const admin = await connectedAdmin(kafkaClient(bootstrap));
    const topic = await topicWithRecords(admin, 1, 5);
    const group = uniqueName('tools-reset');
    assertToolSucceeded(
      await consumerGroupsCommand(bootstrap, [
        '--reset-offsets',
        '--group',
        group,
        '--topic',
        topic,
        '--to-offset',
        '3',
        '--execute',
      ]),
    );
    expect(await committedOffsets(admin, group, topic)).toEqual({ 0: '3' });
  });

  it('reports a failed group command through ok, though the tool exits 0', async () => {
    const result = await consumerGroupsCommand(bootstrap, [
      '--delete',
      '--group',
      uniqueName('tools-missing'),
    ]);
    expect(result.exitCode).toBe(0);
    expect(result.ok).toBe(false);
    expect(() => assertToolSucceeded(result)).toThrow(/GroupIdNotFoundException/);
  });

  it('console producer writes zstd-compressed records a classic console consumer reads back', async () => {
    const admin = await connectedAdmin(kafkaClient(bootstrap));
    const topic = uniqueName('tools-zstd');
    await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
    const values = ['alpha', 'beta', 'gamma'];
    assertToolSucceeded(await consoleProducer({ bootstrap, topic, values, compressionCodec: 'zstd' }));

    const group = uniqueName('tools-classic');
    const consumed = assertToolSucceeded(
      await consoleConsumer({ bootstrap, topic, group, groupProtocol: 'classic', maxMessages: 3 }),
    );
    expect(consumed.values).toEqual(values);
    expect(await groupType(group)).toBe('Classic');
    expect(await committedOffsets(admin, group, topic)).toEqual({ 0: '3' });
  });
});
