// How long nats-server takes to create the consumer health reads each stream through, as health creates
// it at start (services/health/src/event-feed.ts: named, filtered on the whole stream, from the first
// message, no acks, in memory): health's JetStream API calls give up after nats.js's default 5 s, and
// its replay is its start. Created and deleted again here with a patient client.
import { performance } from 'node:perf_hooks';
import { AckPolicy, DeliverPolicy, nanos, nuid, type JetStreamManager } from 'nats';
import type { Names } from '@offsetsync/contracts';

const STREAMS = ['committed', 'translated', 'applied'] as const;

/** Milliseconds to create each stream's consumer, one stream after another. */
export async function timeConsumerCreates(
  jsm: JetStreamManager,
  names: Names,
): Promise<Record<(typeof STREAMS)[number], number>> {
  const times = { committed: 0, translated: 0, applied: 0 };
  for (const kind of STREAMS) {
    const stream = names.stream(kind);
    const name = `bench_probe_${nuid.next()}`;
    const started = performance.now();
    await jsm.consumers.add(stream, {
      name,
      filter_subject: names.streamFilter(kind),
      ack_policy: AckPolicy.None,
      deliver_policy: DeliverPolicy.All,
      inactive_threshold: nanos(60_000),
      mem_storage: true,
      num_replicas: 1,
    });
    times[kind] = Math.round(performance.now() - started);
    await jsm.consumers.delete(stream, name);
  }
  return times;
}
