import { context, ROOT_CONTEXT, trace, type Context, type ContextManager } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { headers } from 'nats';
import { afterEach, describe, expect, it } from 'vitest';
import { extractTraceContext, injectTraceContext } from './trace-context.js';

function tracing() {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  return { exporter, tracer: provider.getTracer('test') };
}

/** Synchronous context manager for `context.with` without the Node SDK. */
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

afterEach(() => {
  context.disable();
});

describe('NATS trace context', () => {
  it('injects a W3C traceparent that extracts to the same trace', () => {
    const { tracer } = tracing();
    const span = tracer.startSpan('publish');
    const ctx = trace.setSpan(ROOT_CONTEXT, span);
    const h = headers();
    injectTraceContext(h, ctx);
    span.end();

    const { traceId, spanId } = span.spanContext();
    expect(h.get('traceparent')).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    expect(h.get('traceparent')).toBe(`00-${traceId}-${spanId}-01`);

    const extracted = extractTraceContext(h);
    expect(trace.getSpanContext(extracted)).toMatchObject({ traceId, spanId, isRemote: true });
  });

  it('injects from the active context by default', () => {
    context.setGlobalContextManager(new StackContextManager());
    const { tracer } = tracing();
    const span = tracer.startSpan('publish');
    const h = headers();
    context.with(trace.setSpan(context.active(), span), () => injectTraceContext(h));
    expect(h.get('traceparent')).toContain(span.spanContext().traceId);
  });

  it('writes nothing without a span', () => {
    const h = headers();
    injectTraceContext(h, ROOT_CONTEXT);
    expect(h.has('traceparent')).toBe(false);
  });

  it('extracts no span from headers without traceparent, or without headers', () => {
    const h = headers();
    h.set('Nats-Msg-Id', 'abc');
    expect(trace.getSpan(extractTraceContext(h))).toBeUndefined();
    expect(trace.getSpan(extractTraceContext(undefined))).toBeUndefined();
  });

  it('ignores a malformed traceparent', () => {
    const h = headers();
    h.set('traceparent', '00-not-a-trace-01');
    expect(trace.getSpan(extractTraceContext(h))).toBeUndefined();
  });
});
