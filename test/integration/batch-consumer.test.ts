// BatchConsumer against the private nats-server: what an instance holds while its handler works (the
// committer's heartbeat reports it as pending), and a failed batch comes back instead of being lost.
import { AckPolicy, type JsMsg } from 'nats';
import pino from 'pino';
import { describe, expect, inject, it, onTestFinished } from 'vitest';
import { BatchConsumer } from '@offsetsync/jetstream';
import { natsConnection } from '../support/jetstream.js';
import { uniqueName } from '../support/names.js';
import { waitFor } from '../infra/wait.js';

const testbed = inject('testbed');

const until = (what: string, condition: () => boolean, timeoutMs: number): Promise<true> =>
  waitFor(what, () => Promise.resolve(condition() ? true : undefined), { timeoutMs, intervalMs: 20 });

async function setUp(messages: number) {
  const nc = await natsConnection(testbed.nats.url);
  const jsm = await nc.jetstreamManager();
  const js = nc.jetstream();
  const stream = uniqueName('batchtest').replace(/[^A-Za-z0-9_-]/g, '_');
  await jsm.streams.add({ name: stream, subjects: [`${stream}.>`] });
  onTestFinished(() => jsm.streams.delete(stream).then(() => undefined));
  await jsm.consumers.add(stream, { durable_name: 'worker', ack_policy: AckPolicy.Explicit, ack_wait: 30e9 });
  for (let i = 0; i < messages; i++) await js.publish(`${stream}.k${i}`, new TextEncoder().encode(`m${i}`));
  return { js, stream };
}

function start(
  js: ReturnType<Awaited<ReturnType<typeof natsConnection>>['jetstream']>,
  stream: string,
  handle: (messages: JsMsg[]) => Promise<void>,
): BatchConsumer {
  const consumer = new BatchConsumer({
    js,
    stream,
    durable: 'worker',
    maxBatch: 2,
    concurrency: 2,
    handle,
    logger: pino({ level: 'silent' }),
    retryDelayMs: 50,
  });
  onTestFinished(() => consumer.stop());
  return consumer;
}

describe('BatchConsumer', () => {
  it('counts the messages it holds, waiting or being handled, until they are settled', async () => {
    const { js, stream } = await setUp(5);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const consumer = start(js, stream, async (messages) => {
      await gate;
      for (const message of messages) message.ack();
    });
    expect(consumer.held).toBe(0);
    await consumer.start();
    try {
      // Two batches of two are handled (and wait at the gate); the fifth message waits for a free slot.
      await until('all 5 messages held', () => consumer.held === 5, 10_000);
      expect(consumer.handled).toBe(0);
    } finally {
      // Also when a check failed: stop() finishes the batches in hand, which wait for the gate.
      release();
    }
    await until('all 5 handled', () => consumer.handled === 5, 10_000);
    expect(consumer.held).toBe(0);
  });

  it('hands a failed batch back; its messages come again and are handled', async () => {
    const { js, stream } = await setUp(3);
    const seen: string[] = [];
    let failures = 0;
    const consumer = start(js, stream, (messages) => {
      if (failures < 2) {
        failures += 1;
        return Promise.reject(new Error('transient'));
      }
      for (const message of messages) {
        seen.push(new TextDecoder().decode(message.data));
        message.ack();
      }
      return Promise.resolve();
    });
    await consumer.start();
    await until('all 3 messages acknowledged', () => seen.length >= 3, 10_000);
    expect([...new Set(seen)].sort()).toEqual(['m0', 'm1', 'm2']);
    await until('nothing held', () => consumer.held === 0, 5_000);
  });
});
