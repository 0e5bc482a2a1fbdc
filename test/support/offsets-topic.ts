import type { Kafka } from 'kafkajs';
import {
  decodeOffsetsTopicRecord,
  type OffsetCommitRecord,
} from '../../services/collector/src/offsets-topic-decoder.js';
import { uniqueName } from './names.js';

/**
 * Reads a cluster's raw `__consumer_offsets` from the beginning with a throwaway consumer group and
 * returns the offset commits of `group`, in log order, once `until` accepts what was found.
 */
export async function readOffsetsTopicCommits(
  kafka: Kafka,
  options: { group: string; until: (found: OffsetCommitRecord[]) => boolean; timeoutMs?: number },
): Promise<OffsetCommitRecord[]> {
  const consumer = kafka.consumer({ groupId: uniqueName('raw-offsets-reader'), maxWaitTimeInMs: 100 });
  await consumer.connect();
  const found: OffsetCommitRecord[] = [];
  try {
    await consumer.subscribe({ topic: '__consumer_offsets', fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(
            new Error(`no matching commits of ${options.group} within ${options.timeoutMs ?? 20_000} ms`),
          ),
        options.timeoutMs ?? 20_000,
      );
      consumer
        .run({
          autoCommit: false,
          eachMessage: ({ message }) => {
            const record = decodeOffsetsTopicRecord(message.key, message.value);
            if (record.kind === 'offset-commit' && record.group === options.group) {
              found.push(record);
              if (options.until(found)) {
                clearTimeout(timer);
                resolve();
              }
            }
            return Promise.resolve();
          },
        })
        .catch(reject);
    });
  } finally {
    await consumer.disconnect();
  }
  return found;
}
