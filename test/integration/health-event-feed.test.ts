// The health service's event feed against the private nats-server: it replays a stream and follows it,
// and when its consumer is taken away (deleted by an operator, or removed by the server while health was
// cut off) it reports the stream, makes a new consumer after the last message it read, and goes on:
// every message read once, in order, none skipped.
import { Names } from '@offsetsync/contracts';
import { streamSpecs } from '@offsetsync/jetstream';
import { type JsMsg } from 'nats';
import { describe, expect, inject, it, onTestFinished } from 'vitest';
import { EventFeed } from '../../services/health/src/event-feed.js';
import type { HealthStream } from '../../services/health/src/health-events.js';
import { natsConnection } from '../support/jetstream.js';
import { uniqueName } from '../support/names.js';
import { waitFor } from '../infra/wait.js';

const testbed = inject('testbed');
const encoder = new TextEncoder();

async function setUp() {
  const nc = await natsConnection(testbed.nats.url);
  const jsm = await nc.jetstreamManager();
  const js = nc.jetstream();
  const names = new Names(uniqueName('feed').replace(/-/g, '_'));
  for (const spec of streamSpecs(names, 1)) {
    await jsm.streams.add({ name: spec.name, subjects: spec.subjects });
    onTestFinished(() => jsm.streams.delete(spec.name).then(() => undefined));
  }
  const stream = names.stream('committed');
  /** Publishes `count` messages, each on a subject of its own (the stream keeps one per subject). */
  const publish = async (from: number, count: number) => {
    for (let i = from; i < from + count; i++)
      await js.publish(`${names.committedFilter().slice(0, -1)}src.g${i}.t.0`, encoder.encode(`m${i}`));
  };
  return { jsm, js, names, stream, publish };
}

describe('health event feed', () => {
  it('reads every message once after its consumer is deleted under it, and reports the stream meanwhile', async () => {
    const { jsm, js, names, stream, publish } = await setUp();
    await publish(0, 2_500);
    const read: number[] = [];
    const events: string[] = [];
    const feed = new EventFeed({
      js,
      names,
      onMessage: (kind: HealthStream, message: JsMsg) => {
        if (kind === 'committed') read.push(message.info.streamSequence);
      },
      onFailure: (kind, error) => events.push(`failed ${kind}: ${String(error)}`),
      onRecovery: (kind) => events.push(`recovered ${kind}`),
      retry: { minMs: 50, maxMs: 200 },
    });
    onTestFinished(() => feed.stop());
    await feed.start(jsm);
    // The replay: start() resolves once the stream's content at start has been read.
    expect(read.length).toBe(2_500);

    const healthConsumers = async () =>
      (await jsm.consumers.list(stream).next()).map((c) => c.name).filter((n) => n.startsWith('health_'));
    const [first] = await healthConsumers();
    expect(first, 'health reads through a consumer of its own').toBeDefined();
    await jsm.consumers.delete(stream, first!);
    await publish(2_500, 500);

    await waitFor('all 3000 messages read', () => Promise.resolve(read.length >= 3_000 || undefined), {
      timeoutMs: 30_000,
    });
    expect(read).toEqual([...read].sort((a, b) => a - b));
    expect(new Set(read).size).toBe(read.length);
    expect(read.length).toBe(3_000);
    expect((await healthConsumers()).filter((n) => n !== first)).toHaveLength(1);
    await waitFor(
      'the failure reported, then the recovery',
      () => Promise.resolve(events.at(-1) === 'recovered committed' || undefined),
      { timeoutMs: 30_000 },
    );
    expect(events[0]).toMatch(/^failed committed: /);
  });
});
