import {
  context,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Context,
  type Span,
  type SpanOptions,
  type TextMapGetter,
  type TextMapSetter,
  type Tracer,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import type { MsgHdrs } from 'nats';

/**
 * W3C trace context (`traceparent`, `tracestate`) carried in NATS message headers, so one offset sync is
 * one trace from collector to committer. The propagator is used directly rather than through the global
 * API, so propagation works whether or not telemetry registered a global propagator.
 */

const propagator = new W3CTraceContextPropagator();

const headerSetter: TextMapSetter<MsgHdrs> = {
  set(carrier, key, value) {
    carrier.set(key, value);
  },
};

const headerGetter: TextMapGetter<MsgHdrs> = {
  get(carrier, key) {
    // MsgHdrs.get returns '' for a missing header; the propagator expects undefined.
    const value = carrier.get(key);
    return value === '' ? undefined : value;
  },
  keys(carrier) {
    return carrier.keys();
  },
};

/** Writes the span context of `ctx` (default: the active context) into `headers`. No-op without a valid span. */
export function injectTraceContext(headers: MsgHdrs, ctx: Context = context.active()): void {
  propagator.inject(ctx, headers, headerSetter);
}

/**
 * Reads the trace context from message headers into `base` (default: the root context, so a message
 * starts from its own trace rather than whatever the consumer loop had active). Headers without a valid
 * `traceparent` give `base` unchanged.
 */
export function extractTraceContext(headers: MsgHdrs | undefined, base: Context = ROOT_CONTEXT): Context {
  if (headers === undefined) return base;
  return propagator.extract(base, headers, headerGetter);
}

/**
 * Runs `fn` in a new active span whose parent is the trace context found in `headers` (a consumer span by
 * default). The span records a thrown error, is marked failed, and ends when `fn` settles.
 */
export async function withSpanFromHeaders<T>(
  tracer: Tracer,
  name: string,
  headers: MsgHdrs | undefined,
  fn: (span: Span) => Promise<T> | T,
  options: SpanOptions = {},
): Promise<T> {
  const parent = extractTraceContext(headers);
  return tracer.startActiveSpan(name, { kind: SpanKind.CONSUMER, ...options }, parent, async (span) => {
    try {
      return await fn(span);
    } catch (e: unknown) {
      span.recordException(e instanceof Error ? e : String(e));
      span.setStatus({ code: SpanStatusCode.ERROR, message: e instanceof Error ? e.message : String(e) });
      throw e;
    } finally {
      span.end();
    }
  });
}

/** The trace id in `ctx`, if it holds a valid span context. */
export function traceIdOf(ctx: Context): string | undefined {
  const spanContext = trace.getSpanContext(ctx);
  return spanContext !== undefined && trace.isSpanContextValid(spanContext) ? spanContext.traceId : undefined;
}
