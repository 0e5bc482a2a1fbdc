import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';
import * as semconv from '@opentelemetry/semantic-conventions/incubating';
import { describe, expect, it } from 'vitest';
import { ErrorCodes, OffsetSyncError } from '@offsetsync/contracts';
import { failSpan, messagingSpan, type MessagingSpanSpec } from './messaging-spans.js';

function recorded(spec: MessagingSpanSpec, fail?: unknown): ReadableSpan {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const { name, options } = messagingSpan(spec);
  const span = provider.getTracer('test').startSpan(name, options);
  if (fail !== undefined) failSpan(span, fail);
  span.end();
  const [finished] = exporter.getFinishedSpans();
  return finished!;
}

/** Every attribute name the conventions' registry defines (values of its ATTR_* exports). */
const registered = new Set(
  Object.entries(semconv)
    .filter(([key]) => key.startsWith('ATTR_'))
    .map(([, value]) => value as string),
);

const publish: MessagingSpanSpec = {
  operation: 'publish',
  stage: 'collect',
  subject: 'offsetsync.committed.src.app.orders.3',
  subjectTemplate: 'offsetsync.committed.src.>',
  messageId: 'src:7:1200',
  attributes: { 'offsetsync.group': 'app' },
};

const processing: MessagingSpanSpec = {
  operation: 'process',
  stage: 'commit',
  subject: 'offsetsync.translated.src.dst.app.orders.3',
  subjectTemplate: 'offsetsync.translated.src.dst.>',
  consumer: 'committer-src-dst',
};

describe('messagingSpan', () => {
  it('makes a publish a PRODUCER span named for its operation and subject filter, a send on nats', () => {
    const span = recorded(publish);
    expect(span.name).toBe('publish offsetsync.committed.src.>');
    expect(span.kind).toBe(SpanKind.PRODUCER);
    expect(span.attributes).toEqual({
      'messaging.system.name': 'nats',
      'messaging.system': 'nats',
      'messaging.operation.name': 'publish',
      'messaging.operation.type': 'send',
      'messaging.destination.name': 'offsetsync.committed.src.app.orders.3',
      'messaging.destination.template': 'offsetsync.committed.src.>',
      'messaging.message.id': 'src:7:1200',
      'offsetsync.stage': 'collect',
      'offsetsync.group': 'app',
    });
  });

  it('makes a process a CONSUMER span that names the durable consumer as the consumer group', () => {
    const span = recorded(processing);
    expect(span.name).toBe('process offsetsync.translated.src.dst.>');
    expect(span.kind).toBe(SpanKind.CONSUMER);
    expect(span.attributes).toMatchObject({
      'messaging.operation.name': 'process',
      'messaging.operation.type': 'process',
      'messaging.consumer.group.name': 'committer-src-dst',
      'messaging.destination.name': 'offsetsync.translated.src.dst.app.orders.3',
    });
    expect(span.attributes).not.toHaveProperty('messaging.message.id');
  });

  it('uses only attribute names of the conventions registry besides offsetsync.*', () => {
    for (const spec of [publish, processing]) {
      const names = Object.keys(recorded(spec, new Error('x')).attributes);
      expect(names.filter((n) => !n.startsWith('offsetsync.') && !registered.has(n))).toEqual([]);
    }
  });

  it("keeps the conventions' attributes when offsetsync's own name the same keys", () => {
    const span = recorded({
      ...publish,
      attributes: { 'messaging.system.name': 'kafka', 'messaging.destination.name': 'elsewhere' },
    });
    expect(span.attributes['messaging.system.name']).toBe('nats');
    expect(span.attributes['messaging.destination.name']).toBe('offsetsync.committed.src.app.orders.3');
  });
});

describe('failSpan', () => {
  it("gives an OffsetSyncError's stable code as error.type, with status ERROR and the exception", () => {
    const error = new OffsetSyncError('not a translation', { code: ErrorCodes.DECODE_ERROR });
    const span = recorded(processing, error);
    expect(span.attributes['error.type']).toBe(ErrorCodes.DECODE_ERROR);
    expect(span.status).toEqual({ code: SpanStatusCode.ERROR, message: 'not a translation' });
    expect(span.events.map((e) => e.name)).toEqual(['exception']);
  });

  it("gives another error's class name, and _OTHER for a thrown non-error", () => {
    expect(recorded(processing, new TypeError('bad')).attributes['error.type']).toBe('TypeError');
    const thrown = recorded(processing, 'a string');
    expect(thrown.attributes['error.type']).toBe('_OTHER');
    expect(thrown.status.message).toBe('a string');
  });
});
