import { EventEmitter } from 'node:events';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ErrorCodes, OffsetSyncError } from '@offsetsync/contracts';
import { createLogger } from '../logging/logger.js';
import {
  runService,
  ServiceLifecycle,
  type LifecycleState,
  type ServiceLifecycleOptions,
} from './service-lifecycle.js';

function captureLogger() {
  const records: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (line !== '') records.push(JSON.parse(line) as Record<string, unknown>);
      }
      callback();
    },
  });
  return {
    logger: createLogger({ service: 'test', instanceId: 't-1', level: 'debug', destination }),
    records,
  };
}

/** A promise with its resolve/reject exposed, to hold start or stop at a chosen point. */
function gate() {
  let open!: () => void;
  let fail!: (e: unknown) => void;
  const promise = new Promise<void>((resolve, reject) => {
    open = resolve;
    fail = reject;
  });
  return { promise, open, fail };
}

function lifecycle(overrides: Partial<ServiceLifecycleOptions> = {}) {
  const { logger, records } = captureLogger();
  const calls: string[] = [];
  const states: LifecycleState[] = [];
  const service = new ServiceLifecycle({
    name: 'svc',
    logger,
    graceMs: 50,
    start: () => {
      calls.push('start');
      return Promise.resolve();
    },
    stop: (reason) => {
      calls.push(`stop:${reason}`);
      return Promise.resolve();
    },
    ...overrides,
  });
  service.onStateChange((state) => states.push(state));
  return { service, calls, states, records };
}

function fakeProcess() {
  const exits: number[] = [];
  const emitter = new EventEmitter();
  return { emitter, exits, exit: (code: number) => exits.push(code) };
}

async function until(condition: () => boolean, timeoutMs = 1_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

describe('ServiceLifecycle', () => {
  it('goes idle -> starting -> running -> stopping -> stopped', async () => {
    const { service, calls, states } = lifecycle();
    expect(service.state).toBe('idle');
    await service.start();
    expect(service.state).toBe('running');
    await service.stop('test');
    expect(states).toEqual(['starting', 'running', 'stopping', 'stopped']);
    expect(calls).toEqual(['start', 'stop:test']);
  });

  it('starts once', async () => {
    const { service, calls } = lifecycle();
    const first = service.start();
    expect(service.start()).toBe(first);
    await first;
    expect(calls).toEqual(['start']);
  });

  it('fails start: state failed, error rethrown', async () => {
    const boom = new Error('no broker');
    const { service, states } = lifecycle({ start: () => Promise.reject(boom) });
    await expect(service.start()).rejects.toBe(boom);
    expect(service.state).toBe('failed');
    expect(states).toEqual(['starting', 'failed']);
  });

  it('stops once and gives concurrent callers the same promise', async () => {
    const held = gate();
    let stops = 0;
    const { service } = lifecycle({
      stop: () => {
        stops += 1;
        return held.promise;
      },
    });
    await service.start();
    const first = service.stop('a');
    const second = service.stop('b');
    expect(second).toBe(first);
    expect(service.state).toBe('stopping');
    held.open();
    await first;
    expect(service.stop()).toBe(first);
    expect(stops).toBe(1);
    expect(service.state).toBe('stopped');
  });

  it('rejects with LIFECYCLE when stop exceeds the grace period', async () => {
    const { service } = lifecycle({ graceMs: 10, stop: () => new Promise<void>(() => undefined) });
    await service.start();
    const error: unknown = await service.stop().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OffsetSyncError);
    expect((error as OffsetSyncError).code).toBe(ErrorCodes.LIFECYCLE);
    expect(service.state).toBe('failed');
  });

  it('passes on a failing stop function', async () => {
    const { service } = lifecycle({ stop: () => Promise.reject(new Error('drain failed')) });
    await service.start();
    await expect(service.stop()).rejects.toThrow('drain failed');
    expect(service.state).toBe('failed');
  });

  it('a stop during start waits for start, then stops', async () => {
    const held = gate();
    const { service, calls, states } = lifecycle({
      start: () => {
        calls.push('start');
        return held.promise;
      },
    });
    const started = service.start();
    const stopped = service.stop('early');
    expect(calls).toEqual(['start']);
    held.open();
    await Promise.all([started, stopped]);
    expect(calls).toEqual(['start', 'stop:early']);
    expect(states).toEqual(['starting', 'stopping', 'stopped']);
  });

  it('stopping an idle service skips the stop function and forbids a later start', async () => {
    const { service, calls } = lifecycle();
    await service.stop();
    expect(service.state).toBe('stopped');
    expect(calls).toEqual([]);
    await expect(service.start()).rejects.toMatchObject({ code: ErrorCodes.LIFECYCLE });
  });

  it('unsubscribes listeners, and survives a throwing one', async () => {
    const { service } = lifecycle();
    const seen: LifecycleState[] = [];
    const off = service.onStateChange((state) => seen.push(state));
    service.onStateChange(() => {
      throw new Error('bad listener');
    });
    await service.start();
    off();
    await service.stop();
    expect(seen).toEqual(['starting', 'running']);
    expect(service.state).toBe('stopped');
  });
});

describe('installSignalHandlers', () => {
  it('stops on SIGTERM and exits 0, logging the signal once', async () => {
    const { service, calls, records } = lifecycle();
    const proc = fakeProcess();
    await service.start();
    service.installSignalHandlers({ process: proc.emitter, exit: proc.exit });
    proc.emitter.emit('SIGTERM');
    await until(() => proc.exits.length > 0);
    expect(proc.exits).toEqual([0]);
    expect(calls).toEqual(['start', 'stop:SIGTERM']);
    expect(records.filter((r) => r.signal === 'SIGTERM')).toHaveLength(1);
  });

  it('exits 1 when stop fails', async () => {
    const { service, records } = lifecycle({ stop: () => Promise.reject(new Error('flush failed')) });
    const proc = fakeProcess();
    await service.start();
    service.installSignalHandlers({ process: proc.emitter, exit: proc.exit });
    proc.emitter.emit('SIGINT');
    await until(() => proc.exits.length > 0);
    expect(proc.exits).toEqual([1]);
    expect(records.filter((r) => r.level === 'error')).toHaveLength(1);
  });

  it('exits 1 when the grace period elapses', async () => {
    const { service } = lifecycle({ graceMs: 20, stop: () => new Promise<void>(() => undefined) });
    const proc = fakeProcess();
    await service.start();
    service.installSignalHandlers({ process: proc.emitter, exit: proc.exit });
    proc.emitter.emit('SIGTERM');
    await until(() => proc.exits.length > 0);
    expect(proc.exits).toEqual([1]);
  });

  it('a second signal forces exit 1, and exit is called only once', async () => {
    const held = gate();
    const { service } = lifecycle({ stop: () => held.promise });
    const proc = fakeProcess();
    await service.start();
    service.installSignalHandlers({ process: proc.emitter, exit: proc.exit });
    proc.emitter.emit('SIGTERM');
    proc.emitter.emit('SIGINT');
    expect(proc.exits).toEqual([1]);
    held.open();
    await service.stop();
    expect(proc.exits).toEqual([1]);
  });

  it('removes its handlers', async () => {
    const { service, calls } = lifecycle();
    const proc = fakeProcess();
    await service.start();
    const remove = service.installSignalHandlers({ process: proc.emitter, exit: proc.exit });
    expect(proc.emitter.listenerCount('SIGTERM')).toBe(1);
    remove();
    expect(proc.emitter.listenerCount('SIGTERM')).toBe(0);
    expect(proc.emitter.listenerCount('SIGINT')).toBe(0);
    proc.emitter.emit('SIGTERM');
    expect(calls).toEqual(['start']);
  });
});

describe('runService', () => {
  it('starts the service and leaves it running until a signal', async () => {
    const { service } = lifecycle();
    const proc = fakeProcess();
    await runService(service, { process: proc.emitter, exit: proc.exit });
    expect(service.state).toBe('running');
    expect(proc.exits).toEqual([]);
    proc.emitter.emit('SIGTERM');
    await until(() => proc.exits.length > 0);
    expect(proc.exits).toEqual([0]);
  });

  it('on a failed start logs the error once, cleans up, and exits 1', async () => {
    const { service, calls, records } = lifecycle({ start: () => Promise.reject(new Error('no nats')) });
    const proc = fakeProcess();
    await runService(service, { process: proc.emitter, exit: proc.exit });
    expect(proc.exits).toEqual([1]);
    expect(calls).toEqual(['stop:start failed']);
    const errors = records.filter((r) => r.level === 'error');
    expect(errors).toHaveLength(1);
    expect(errors[0]?.err).toMatchObject({ message: 'no nats' });
  });
});
