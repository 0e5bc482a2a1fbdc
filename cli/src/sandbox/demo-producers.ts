// What the sandbox writes before anything is copied: the demo records on the source, and each target's
// records of its own in the topic its MirrorMaker copies into.
import type { Kafka as KafkaClient } from 'kafkajs';
import { demoRecords } from './demo-workload.js';
import { ownRecordCount, type SandboxTarget } from './sandbox-targets.js';

/** Records per partition in one produce request. */
const BATCH = 500;

/**
 * Idempotent: on a loaded machine kafkajs retries a produce request that timed out but was written,
 * which would write the batch twice, and the sandbox counts on exact numbers (the demo's stop offsets
 * are record indexes; it prints how many records of its own each target holds).
 */
function producer(kafka: KafkaClient) {
  return kafka.producer({ allowAutoTopicCreation: false, idempotent: true });
}

/** The demo records ({@link demoRecords}, stamped an hour ago) into `topic` on the source. */
export async function writeDemoRecords(
  kafka: KafkaClient,
  demo: { topic: string; partitions: number; perPartition: number },
): Promise<void> {
  const writer = producer(kafka);
  await writer.connect();
  try {
    const records = demoRecords(demo.partitions, demo.perPartition, Date.now() - 3_600_000);
    for (let start = 0; start < demo.perPartition; start += BATCH) {
      await writer.sendBatch({
        topicMessages: [
          {
            topic: demo.topic,
            messages: records.flatMap((partition) =>
              partition.slice(start, start + BATCH).map((r) => ({
                partition: r.partition,
                key: r.key,
                value: r.value,
                timestamp: String(r.timestampMs),
              })),
            ),
          },
        ],
      });
    }
  } finally {
    await writer.disconnect();
  }
}

/**
 * `target`'s own records in `topic` ({@link ownRecordCount} per partition), valued `<cluster>-own:<p>:<i>`:
 * no copy of a demo record, so a group that reads one on the target counts it as replayed.
 */
export async function writeOwnRecords(
  kafka: KafkaClient,
  target: SandboxTarget,
  demo: { topic: string; partitions: number },
): Promise<void> {
  const writer = producer(kafka);
  await writer.connect();
  try {
    await writer.send({
      topic: demo.topic,
      messages: Array.from({ length: demo.partitions }, (_, partition) =>
        Array.from({ length: ownRecordCount(target, partition) }, (_, i) => ({
          partition,
          key: `${target.cluster}-own`,
          value: `${target.cluster}-own:${partition}:${i}`,
        })),
      ).flat(),
    });
  } finally {
    await writer.disconnect();
  }
}
