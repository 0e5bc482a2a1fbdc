import {
  context,
  ROOT_CONTEXT,
  type Context,
  type TextMapGetter,
  type TextMapSetter,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import type { MsgHdrs } from 'nats';

/**
 * W3C trace context (`traceparent`, `tracestate`) carried in NATS message headers, so one offset sync is
 * one trace from collector to committer (the spans: @offsetsync/runtime's messaging-spans). The propagator is used directly rather than through the global
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
