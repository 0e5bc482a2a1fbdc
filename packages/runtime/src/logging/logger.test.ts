import { Writable } from 'node:stream';
import { context, trace, ROOT_CONTEXT, type Context, type ContextManager } from '@opentelemetry/api';
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger, type CreateLoggerOptions } from './logger.js';

/** A synchronous context manager, enough for `context.with` in tests without the Node SDK. */
class StackContextManager implements ContextManager {
  private current: Context = ROOT_CONTEXT;
  active(): Context {
    return this.current;
  }
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    ctx: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    const previous = this.current;
    this.current = ctx;
    try {
      return fn.call(thisArg, ...args);
    } finally {
      this.current = previous;
    }
  }
  bind<T>(_context: Context, target: T): T {
    return target;
  }
  enable(): this {
    return this;
  }
  disable(): this {
    this.current = ROOT_CONTEXT;
    return this;
  }
}

function capture(options: Partial<CreateLoggerOptions> = {}) {
  const lines: Record<string, unknown>[] = [];
  // Collects synchronously in write(), so assertions need no waiting.
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (line !== '') lines.push(JSON.parse(line) as Record<string, unknown>);
      }
      callback();
    },
  });
  const logger = createLogger({
    service: 'collector',
    instanceId: 'i-1',
    level: 'info',
    destination: stream,
    ...options,
  });
  return { logger, lines };
}

afterEach(() => {
  context.disable();
});

describe('createLogger', () => {
  it('writes JSON with service, instance, ISO time and level label', () => {
    const { logger, lines } = capture();
    logger.info({ group: 'g1' }, 'hello');
    expect(lines).toHaveLength(1);
    const [record] = lines;
    expect(record).toMatchObject({
      service: 'collector',
      instance: 'i-1',
      level: 'info',
      msg: 'hello',
      group: 'g1',
    });
    expect(record?.time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(record).not.toHaveProperty('trace_id');
  });

  it('respects the level', () => {
    const { logger, lines } = capture({ level: 'warn' });
    logger.info('dropped');
    logger.warn('kept');
    expect(lines.map((l) => l.msg)).toEqual(['kept']);
  });

  it('redacts secrets', () => {
    const { logger, lines } = capture();
    logger.info({ password: 'p', sasl: { password: 's', username: 'u' }, nats: { token: 't' } }, 'secrets');
    expect(lines[0]).toMatchObject({
      password: '***',
      sasl: { password: '***', username: 'u' },
      nats: { token: '***' },
    });
  });

  it('adds trace_id and span_id of the active span', () => {
    context.setGlobalContextManager(new StackContextManager());
    const tracer = new BasicTracerProvider().getTracer('test');
    const { logger, lines } = capture();
    const span = tracer.startSpan('work');
    context.with(trace.setSpan(context.active(), span), () => logger.info('inside'));
    span.end();
    logger.info('outside');
    expect(lines[0]).toMatchObject({
      trace_id: span.spanContext().traceId,
      span_id: span.spanContext().spanId,
    });
    expect(lines[1]).not.toHaveProperty('trace_id');
  });

  it('writes human-readable lines when pretty is requested, secrets still redacted', () => {
    const text: string[] = [];
    const destination = new Writable({
      write(chunk: Buffer, _encoding, done) {
        text.push(chunk.toString());
        done();
      },
    });
    const logger = createLogger({
      service: 'offsetsync-test',
      instanceId: 'i-1',
      level: 'info',
      pretty: true,
      destination,
    });
    logger.info({ nats: { password: 'hunter2' } }, 'readable');
    const output = text.join('');
    expect(output).toMatch(/INFO.*readable/);
    expect(() => JSON.parse(output) as unknown).toThrow();
    expect(output).not.toContain('hunter2');
  });
});
