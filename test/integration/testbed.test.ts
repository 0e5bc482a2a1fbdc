// The test bed itself: two independent real Kafka clusters and a private JetStream server.
import { context, trace } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { connect, headers, StringCodec } from 'nats';
import { describe, expect, inject, it, onTestFinished } from 'vitest';
import { extractTraceContext, injectTraceContext, Names } from '@offsetsync/contracts';
import { provisionDurableConsumer, provisionStreams, streamSpecs } from '@offsetsync/jetstream';
import { readOffsetsTopicCommits } from '../support/offsets-topic.js';
import { connectedAdmin, kafkaClient } from '../support/kafka-clients.js';
import { uniqueName } from '../support/names.js';

const testbed = inject('testbed');

describe('two-cluster test bed', () => {
  it('produces, consumes with a group and commits on the source cluster', async () => {
    const kafka = kafkaClient(testbed.source.bootstrapServers);
    const admin = await connectedAdmin(kafka);
    const topic = uniqueName('bed-produce');
    const group = uniqueName('bed-group');
    await admin.createTopics({ topics: [{ topic, numPartitions: 2 }], waitForLeaders: true });

    const producer = kafka.producer();
    await producer.connect();
    onTestFinished(() => producer.disconnect());
    await producer.send({
      topic,
      messages: Array.from({ length: 20 }, (_, i) => ({
        key: `key-${i}`,
        value: `value-${i}`,
        partition: i % 2,
      })),
    });

    const consumer = kafka.consumer({ groupId: group });
    await consumer.connect();
    onTestFinished(() => consumer.disconnect());
    await consumer.subscribe({ topic, fromBeginning: true });
    const seen: string[] = [];
    await new Promise<void>((resolve, reject) => {
      consumer
        .run({
          autoCommit: false,
          eachMessage: async ({ message, partition }) => {
            seen.push(message.value?.toString() ?? '');
            await consumer.commitOffsets([{ topic, partition, offset: String(Number(message.offset) + 1) }]);
            if (seen.length === 20) resolve();
          },
        })
        .catch(reject);
    });
    await consumer.stop();

    expect(seen.sort()).toEqual(Array.from({ length: 20 }, (_, i) => `value-${i}`).sort());
    const committed = await admin.fetchOffsets({ groupId: group, topics: [topic] });
    expect(committed[0]?.partitions.map((p) => [p.partition, p.offset]).sort()).toEqual([
      [0, '10'],
      [1, '10'],
    ]);
  });

  it("finds a group's commit in the source cluster's raw __consumer_offsets records", async () => {
    const kafka = kafkaClient(testbed.source.bootstrapServers);
    const admin = await connectedAdmin(kafka);
    const topic = uniqueName('bed-raw');
    const group = uniqueName('bed-raw-group');
    await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
    // An admin-style commit needs no consumer: the group is empty.
    await admin.setOffsets({ groupId: group, topic, partitions: [{ partition: 0, offset: '0' }] });
    const producer = kafka.producer();
    await producer.connect();
    onTestFinished(() => producer.disconnect());
    await producer.send({ topic, messages: [{ value: 'a' }, { value: 'b' }, { value: 'c' }] });
    await admin.setOffsets({ groupId: group, topic, partitions: [{ partition: 0, offset: '3' }] });

    const commits = await readOffsetsTopicCommits(kafka, {
      group,
      until: (found) => found.some((c) => c.offset === 3),
    });
    expect(commits.map((c) => [c.topic, c.partition, c.offset])).toEqual([
      [topic, 0, 0],
      [topic, 0, 3],
    ]);
  });

  it('publishes and consumes a JetStream message carrying a W3C traceparent header', async () => {
    const nc = await connect({ servers: testbed.nats.url });
    onTestFinished(() => nc.close());
    const names = new Names(uniqueName('bedtrace').replaceAll('-', '_'));
    const jsm = await nc.jetstreamManager();
    const actions = await provisionStreams(jsm, streamSpecs(names, 1));
    expect(Object.values(actions)).toEqual(['created', 'created', 'created', 'created']);
    // Provisioning again changes nothing.
    expect(Object.values(await provisionStreams(jsm, streamSpecs(names, 1)))).toEqual([
      'unchanged',
      'unchanged',
      'unchanged',
      'unchanged',
    ]);
    onTestFinished(async () => {
      for (const spec of streamSpecs(names, 1)) await jsm.streams.delete(spec.name);
    });

    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    const span = provider.getTracer('test').startSpan('publish');
    const hdrs = headers();
    injectTraceContext(hdrs, trace.setSpan(context.active(), span));
    span.end();

    const subject = names.committed('src', { group: 'g.1 *', topic: 'orders', partition: 0 });
    const js = nc.jetstream();
    const ack = await js.publish(subject, StringCodec().encode('hello'), { headers: hdrs, msgID: 'src:0:1' });
    expect(ack.duplicate).toBe(false);
    // The same Nats-Msg-Id again is dropped by the stream.
    expect(
      (await js.publish(subject, StringCodec().encode('hello'), { headers: hdrs, msgID: 'src:0:1' }))
        .duplicate,
    ).toBe(true);

    const durable = 'bed-reader';
    await provisionDurableConsumer(jsm, {
      stream: names.stream('committed'),
      durable,
      filterSubject: names.committedFilter('src'),
      ackWaitMs: 5000,
      maxAckPending: 100,
    });
    const consumer = await js.consumers.get(names.stream('committed'), durable);
    const message = await consumer.next({ expires: 5000 });
    expect(message).not.toBeNull();
    expect(message?.subject).toBe(subject);
    expect(message?.headers?.get('traceparent')).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    const extracted = trace.getSpanContext(extractTraceContext(message?.headers));
    expect(extracted?.traceId).toBe(span.spanContext().traceId);
    expect(extracted?.spanId).toBe(span.spanContext().spanId);
    message?.ack();
  });

  it('runs two independent clusters: different cluster ids, topics not shared', async () => {
    const source = await connectedAdmin(kafkaClient(testbed.source.bootstrapServers));
    const target = await connectedAdmin(kafkaClient(testbed.target.bootstrapServers));
    const sourceCluster = await source.describeCluster();
    const targetCluster = await target.describeCluster();
    expect(sourceCluster.clusterId).toBe(testbed.source.clusterId);
    expect(targetCluster.clusterId).toBe(testbed.target.clusterId);
    expect(sourceCluster.clusterId).not.toBe(targetCluster.clusterId);

    const topic = uniqueName('bed-only-on-source');
    await source.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
    expect(await source.listTopics()).toContain(topic);
    expect(await target.listTopics()).not.toContain(topic);
  });
});
