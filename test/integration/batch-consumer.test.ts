// BatchConsumer against the private nats-server: what an instance holds while its handler works (the
// committer's heartbeat reports it as pending), a batch that failed transiently comes back instead of
// being lost, and one bad message neither fails its batch-mates nor comes back without end.
import { AckPolicy, type JsMsg } from 'nats';
import pino from 'pino';
import { describe, expect, inject, it, onTestFinished } from 'vitest';
import { ErrorCodes, OffsetSyncError } from '@offsetsync/contracts';
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
  deadLetters?: { maxDeliveries: number; onDeadLetter: (message: JsMsg, error: unknown) => void },
): BatchConsumer {
  const consumer = new BatchConsumer({
    ...deadLetters,
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

  it('hands a batch that failed transiently back; its messages come again and are handled', async () => {
    const { js, stream } = await setUp(3);
    const seen: string[] = [];
    let failures = 0;
    const consumer = start(js, stream, (messages) => {
      if (failures < 2) {
        failures += 1;
        return Promise.reject(new OffsetSyncError('broker gone', { code: ErrorCodes.KAFKA_UNREACHABLE }));
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

  it('handles the rest of a batch that one bad message fails, and dead-letters that one after its last delivery', async () => {
    const { js, stream } = await setUp(6);
    const acked: string[] = [];
    const deliveriesOfBad: number[] = [];
    const dead: Array<{ subject: string; error: string }> = [];
    const consumer = start(
      js,
      stream,
      (messages) => {
        // m3 breaks whatever batch it is in, with an error that retrying does not fix.
        const bad = messages.find((m) => new TextDecoder().decode(m.data) === 'm3');
        if (bad !== undefined) {
          if (messages.length === 1) deliveriesOfBad.push(bad.info.redeliveryCount);
          return Promise.reject(new RangeError('partition must be a non-negative integer'));
        }
        for (const message of messages) {
          acked.push(new TextDecoder().decode(message.data));
          message.ack();
        }
        return Promise.resolve();
      },
      {
        maxDeliveries: 3,
        onDeadLetter: (message, error) =>
          dead.push({ subject: message.subject, error: error instanceof Error ? error.message : '' }),
      },
    );
    await consumer.start();
    await until('the bad message dead-lettered', () => dead.length === 1, 15_000);
    expect([...acked].sort()).toEqual(['m0', 'm1', 'm2', 'm4', 'm5']);
    expect(dead).toEqual([{ subject: `${stream}.k3`, error: 'partition must be a non-negative integer' }]);
    // Alone on its 1st, 2nd and 3rd delivery, then terminated: never seen again.
    expect(deliveriesOfBad).toEqual([1, 2, 3]);
    await until('nothing held', () => consumer.held === 0, 5_000);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(deliveriesOfBad).toEqual([1, 2, 3]);
    const nc = await natsConnection(testbed.nats.url);
    const info = await (await nc.jetstreamManager()).consumers.info(stream, 'worker');
    expect(info.num_ack_pending).toBe(0);
  });
});
