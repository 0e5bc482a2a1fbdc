// The sandbox's demo application: the consumer group that consumes part of the topic on the source and
// then continues on each target. It never lets kafkajs commit on its own: the only commits are the one on
// the source that offsetsync carries over, so what it reads on a target starts where offsetsync put it.
import type { Kafka as KafkaClient } from 'kafkajs';

/** How long a consumer may take, and what says that the sandbox gave up meanwhile (it throws then). */
export interface ConsumerWatch {
  timeoutMs: number;
  /** Throws when the consumer should stop waiting: the sandbox is stopping or a process it needs died. */
  check: () => void;
}

/**
 * The group on the source: reads each partition of `topic` up to its offset in `stopAt`, commits that
 * offset, leaves. Resolves with the values (record ids) it consumed.
 */
export async function consumeUpTo(
  kafka: KafkaClient,
  demo: { group: string; topic: string; stopAt: readonly number[] },
  watch: ConsumerWatch,
): Promise<string[]> {
  const consumer = kafka.consumer({ groupId: demo.group });
  await consumer.connect();
  const consumed: string[] = [];
  try {
    await consumer.subscribe({ topic: demo.topic, fromBeginning: true });
    const done = new Set<number>();
    await untilDone(`group ${demo.group} to consume ${demo.topic}`, watch, (resolve, reject) => {
      consumer
        .run({
          autoCommit: false,
          eachBatch: async ({ batch }) => {
            const p = batch.partition;
            const stop = demo.stopAt[p]!;
            if (done.has(p)) return;
            for (const m of batch.messages) {
              if (Number(m.offset) >= stop) break;
              consumed.push(m.value?.toString() ?? '');
            }
            if (Number(batch.lastOffset()) + 1 >= stop) {
              await consumer.commitOffsets([{ topic: demo.topic, partition: p, offset: String(stop) }]);
              done.add(p);
              if (done.size === demo.stopAt.length) resolve();
            }
          },
        })
        .catch(reject);
    });
  } finally {
    await consumer.disconnect();
  }
  return consumed;
}

/**
 * The same group on a target: reads `topic` from the group's committed offsets there to the end of every
 * partition, committing nothing. Resolves with the values it read, repeats included.
 */
export async function consumeToEnd(
  kafka: KafkaClient,
  demo: { group: string; topic: string },
  watch: ConsumerWatch,
): Promise<string[]> {
  const admin = kafka.admin();
  await admin.connect();
  let ends: Map<number, number>;
  const reachedEnd = new Set<number>();
  try {
    ends = new Map(
      (await admin.fetchTopicOffsets(demo.topic)).map((o) => [o.partition, Number(o.high)] as const),
    );
    const committed = await admin.fetchOffsets({ groupId: demo.group, topics: [demo.topic] });
    for (const p of committed[0]?.partitions ?? [])
      if (Number(p.offset) >= (ends.get(p.partition) ?? 0)) reachedEnd.add(p.partition);
  } finally {
    await admin.disconnect();
  }
  const read: string[] = [];
  if (reachedEnd.size === ends.size) return read;
  const consumer = kafka.consumer({ groupId: demo.group });
  await consumer.connect();
  try {
    // fromBeginning only applies to a partition without a committed offset, which offsetsync gave every one.
    await consumer.subscribe({ topic: demo.topic, fromBeginning: true });
    await untilDone(`group ${demo.group} to read the rest of ${demo.topic}`, watch, (resolve, reject) => {
      consumer
        .run({
          autoCommit: false,
          eachBatch: ({ batch }) => {
            for (const m of batch.messages) read.push(m.value?.toString() ?? '');
            if (Number(batch.lastOffset()) + 1 >= (ends.get(batch.partition) ?? 0))
              reachedEnd.add(batch.partition);
            if (reachedEnd.size === ends.size) resolve();
            return Promise.resolve();
          },
        })
        .catch(reject);
    });
  } finally {
    await consumer.disconnect();
  }
  return read;
}

/** A promise settled by `body`, rejected after the watch's timeout or as soon as its check throws. */
function untilDone(
  what: string,
  watch: ConsumerWatch,
  body: (resolve: () => void, reject: (error: unknown) => void) => void,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const deadline = Date.now() + watch.timeoutMs;
    const timer = setInterval(() => {
      try {
        watch.check();
        if (Date.now() > deadline)
          throw new Error(`timed out after ${watch.timeoutMs} ms waiting for ${what}`);
      } catch (error: unknown) {
        clearInterval(timer);
        reject(asError(error));
      }
    }, 250);
    body(
      () => {
        clearInterval(timer);
        resolve();
      },
      (error) => {
        clearInterval(timer);
        reject(asError(error));
      },
    );
  });
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
