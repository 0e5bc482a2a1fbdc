// The health worker over in-memory streams: no NATS. Intake -> read -> fold -> correlate -> publish, and
// a stream that cannot be read in the heartbeats until it is read again.
import { metrics, trace } from '@opentelemetry/api';
import { Events, type NatsConnection } from 'nats';
import pino from 'pino';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import {
  ConfigError,
  encodeEvent,
  ErrorCodes,
  Heartbeat,
  LinkState,
  Names,
  ServiceRole,
} from '@offsetsync/contracts';
import { loadConfig, type ServiceContext, type Telemetry } from '@offsetsync/runtime';
import { HealthWorker } from './health-worker.js';

const names = new Names('t');

/**
 * Streams by name, read the way the event feed reads them (a consumer per attempt, pulls): the first
 * consumer delivers `heartbeats`, and its next pull fails with `failure` if one is given; every later
 * consumer delivers nothing, each pull ending after a moment (the stream is readable again).
 */
function fakeStreams(
  contents: Record<string, { heartbeats: Heartbeat[]; failure?: Error }>,
  connection: ConnectionEvents = new ConnectionEvents(),
) {
  const consumersMade = new Map<string, number>();
  const get = (stream: string) => {
    const made = consumersMade.get(stream) ?? 0;
    consumersMade.set(stream, made + 1);
    const { heartbeats, failure } = contents[stream] ?? { heartbeats: [] };
    let pulls = 0;
    const fetch = () => {
      pulls += 1;
      const first = made === 0 && pulls === 1;
      if (made === 0 && pulls === 2 && failure !== undefined) return Promise.reject(failure);
      let stopped = false;
      async function* deliver() {
        if (first) {
          let seq = 0;
          for (const event of heartbeats) {
            const subject = names.heartbeat('collector', event.instanceId);
            const { headers, payload } = encodeEvent({ type: 'Heartbeat', event }, { subject });
            seq += 1;
            yield { subject, headers, data: payload, info: { streamSequence: seq, deliverySequence: seq } };
          }
        }
        for (let waited = 0; !stopped && waited < 5; waited++)
          await new Promise((resolve) => setTimeout(resolve, 10));
      }
      return Promise.resolve({ stop: () => (stopped = true), [Symbol.asyncIterator]: deliver });
    };
    return Promise.resolve({ fetch });
  };
  const jsm = {
    streams: {
      info: (stream: string) => {
        const messages = contents[stream]?.heartbeats.length ?? 0;
        return Promise.resolve({ state: { messages, last_seq: messages } });
      },
    },
    consumers: { add: () => Promise.resolve({}) },
  };
  return {
    jetstream: () => ({ consumers: { get } }),
    jetstreamManager: () => Promise.resolve(jsm),
    status: () => connection.iterate(),
  } as unknown as NatsConnection;
}

/** The connection's status events, as nats.js' `status()` hands them out, pushed by the test. */
class ConnectionEvents {
  private readonly queue: Array<{ type: Events; data: string }> = [];
  private wake: (() => void) | undefined;

  push(type: Events): void {
    this.queue.push({ type, data: 'nats://fake' });
    this.wake?.();
  }

  async *iterate(): AsyncGenerator<{ type: Events; data: string }> {
    for (;;) {
      const next = this.queue.shift();
      if (next !== undefined) yield next;
      else await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }
}

function context(nats: NatsConnection): ServiceContext {
  const config = loadConfig({
    env: { OFFSETSYNC_HEALTH__GRPC__HOST: '127.0.0.1', OFFSETSYNC_HEALTH__GRPC__PORT: '0' },
  });
  return {
    role: 'health',
    config: { ...config, links: [{ source: 'a', target: 'b', mode: 'commit' }] },
    logger: pino({ level: 'silent' }),
    telemetry: { meter: metrics.getMeter('test'), tracer: trace.getTracer('test') } as unknown as Telemetry,
    nats,
    names,
  };
}

describe('health worker', () => {
  it('folds the heartbeats it reads into the links, and reports a stream it cannot read until it reads it again', async () => {
    const now = Date.now();
    const collector = Heartbeat.fromPartial({
      role: ServiceRole.SERVICE_ROLE_COLLECTOR,
      instanceId: 'col-1',
      sourceClusters: ['a'],
      sentAtMs: now,
      intervalMs: 60_000,
    });
    const worker = new HealthWorker(
      context(
        fakeStreams({
          [names.stream('heartbeats')]: { heartbeats: [collector], failure: new Error('consumer deleted') },
        }),
      ),
      () => now,
    );
    onTestFinished(() => worker.stop());
    await worker.start();

    expect(worker.links.links().map((l) => l.state)).toEqual([LinkState.LINK_STATE_SOURCE_ONLY]);
    expect(worker.heartbeat.progress().eventsByOutcome).toEqual({ read: 1 });
    await vi.waitFor(() =>
      expect(worker.heartbeat.problems()).toEqual([
        expect.objectContaining({
          code: ErrorCodes.NATS_UNREACHABLE,
          detail: 'reading the heartbeats stream failed: consumer deleted',
        }),
      ]),
    );
    // A new consumer reads the stream again: the problem is gone, the heartbeat already read not read twice.
    await vi.waitFor(() => expect(worker.heartbeat.problems()).toEqual([]));
    expect(worker.heartbeat.progress().eventsByOutcome).toEqual({ read: 1 });
  });

  it('takes the links of a reloaded config, and keeps the ones it had while the config does not load', async () => {
    const now = Date.now();
    const worker = new HealthWorker(context(fakeStreams({})), () => now);
    onTestFinished(() => worker.stop());
    await worker.start();
    expect(worker.links.links().map((l) => l.targetCluster)).toEqual(['b']);

    worker.reloadLinks(() => {
      throw new ConfigError([{ path: 'links.0.target', message: 'unknown cluster' }]);
    });
    expect(worker.heartbeat.problems()).toEqual([
      expect.objectContaining({
        code: ErrorCodes.CONFIG_INVALID,
        detail: expect.stringContaining('unknown cluster') as unknown,
      }),
    ]);
    expect(worker.links.links().map((l) => l.targetCluster)).toEqual(['b']);

    worker.reloadLinks(() => ({ links: [{ source: 'a', target: 'c', mode: 'commit' }] }));
    expect(worker.heartbeat.problems()).toEqual([]);
    expect(worker.links.links().map((l) => l.targetCluster)).toEqual(['c']);
  });

  it('hears no heartbeat while its own NATS connection is down, and counts silence again from the reconnection', async () => {
    let now = 1_000;
    const connection = new ConnectionEvents();
    const worker = new HealthWorker(context(fakeStreams({}, connection)), () => now);
    onTestFinished(() => worker.stop());
    await worker.start();
    expect(worker.state.hearing().lostAtMs).toBeUndefined();
    now = 2_000;
    connection.push(Events.Disconnect);
    await vi.waitFor(() => expect(worker.state.hearing()).toEqual({ sinceMs: -Infinity, lostAtMs: 2_000 }));
    now = 9_000;
    connection.push(Events.Reconnect);
    await vi.waitFor(() => expect(worker.state.hearing()).toEqual({ sinceMs: 9_000 }));
  });
});
