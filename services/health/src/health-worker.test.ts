// The health worker over in-memory streams: no NATS. Intake -> read -> fold -> correlate -> publish, and
// a stream that cannot be read any more in the heartbeats.
import { metrics, trace } from '@opentelemetry/api';
import type { NatsConnection } from 'nats';
import pino from 'pino';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { encodeEvent, ErrorCodes, Heartbeat, LinkState, Names, ServiceRole } from '@offsetsync/contracts';
import { loadConfig, type ServiceContext, type Telemetry } from '@offsetsync/runtime';
import { HealthWorker } from './health-worker.js';

const names = new Names('t');

/** Streams by filter: each subscription delivers `heartbeats`, then fails with `failure` (or waits until unsubscribed). */
function fakeStreams(contents: Record<string, { heartbeats: Heartbeat[]; failure?: Error }>) {
  const subscribe = (filter: string) => {
    const stream = contents[filter] ?? { heartbeats: [] };
    let unsubscribed: () => void = () => undefined;
    const ended = new Promise<void>((resolve) => (unsubscribed = resolve));
    async function* deliver() {
      let seq = 0;
      for (const event of stream.heartbeats) {
        const { headers, payload } = encodeEvent({ type: 'Heartbeat', event }, { subject: filter });
        yield { subject: filter, headers, data: payload, info: { streamSequence: ++seq } };
      }
      if (stream.failure !== undefined) throw stream.failure;
      await ended;
    }
    return Promise.resolve({ unsubscribe: () => unsubscribed(), [Symbol.asyncIterator]: deliver });
  };
  const jsm = {
    streams: { info: () => Promise.resolve({ state: { messages: 0, last_seq: 0 } }) },
  };
  return {
    jetstream: () => ({ subscribe }),
    jetstreamManager: () => Promise.resolve(jsm),
  } as unknown as NatsConnection;
}

function context(nats: NatsConnection): ServiceContext {
  const config = loadConfig({
    env: { OFFSETSYNC_HEALTH__GRPC__HOST: '127.0.0.1', OFFSETSYNC_HEALTH__GRPC__PORT: '0' },
  });
  return {
    role: 'health',
    config: { ...config, links: [{ source: 'a', target: 'b' }] },
    logger: pino({ level: 'silent' }),
    telemetry: { meter: metrics.getMeter('test'), tracer: trace.getTracer('test') } as unknown as Telemetry,
    nats,
    names,
  };
}

describe('health worker', () => {
  it('folds the heartbeats it reads into the links, and reports a stream it can no longer read', async () => {
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
          [names.heartbeatFilter()]: { heartbeats: [collector], failure: new Error('consumer deleted') },
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
  });
});
