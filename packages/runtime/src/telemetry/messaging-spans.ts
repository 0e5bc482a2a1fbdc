import { SpanKind, SpanStatusCode, type Attributes, type Span, type SpanOptions } from '@opentelemetry/api';
import { ATTR_ERROR_TYPE } from '@opentelemetry/semantic-conventions';
import {
  ATTR_MESSAGING_CONSUMER_GROUP_NAME,
  ATTR_MESSAGING_DESTINATION_NAME,
  ATTR_MESSAGING_DESTINATION_TEMPLATE,
  ATTR_MESSAGING_MESSAGE_ID,
  ATTR_MESSAGING_OPERATION_NAME,
  ATTR_MESSAGING_OPERATION_TYPE,
  ATTR_MESSAGING_SYSTEM,
  ATTR_MESSAGING_SYSTEM_NAME,
  MESSAGING_OPERATION_TYPE_VALUE_PROCESS,
  MESSAGING_OPERATION_TYPE_VALUE_SEND,
} from '@opentelemetry/semantic-conventions/incubating';
import { OffsetSyncError } from '@offsetsync/contracts';

// The spans of an offset sync, on OpenTelemetry's messaging semantic conventions (the version of the
// pinned @opentelemetry/semantic-conventions): a `publish` span (PRODUCER, operation type `send`) for every
// message a service puts on a JetStream subject, whose context travels in the message's headers, and a
// `process` span (CONSUMER) for every message a service handles, the child of that context. The span is
// named `{operation} {destination template}`; the template is the subject filter the subject falls under
// (`offsetsync.committed.source.>`), low in cardinality, while the full subject is
// `messaging.destination.name`. `offsetsync.stage` says which step of the sync the span is.

/** What offsetsync calls its system: there is no registered value for NATS. */
const MESSAGING_SYSTEM_NATS = 'nats';

/** The step of an offset sync a span belongs to (`offsetsync.stage`). */
export type SyncStage = 'collect' | 'translate' | 'revise' | 'commit';

/** A messaging span to start: see {@link messagingSpan}. */
export interface MessagingSpanSpec {
  /** `publish`: a message put on a subject; `process`: a delivered message handled. */
  operation: 'publish' | 'process';
  stage: SyncStage;
  /** The subject of the message. */
  subject: string;
  /** The subject filter `subject` falls under, for example the stream's filter for one source. */
  subjectTemplate: string;
  /** The durable consumer the message was delivered to (`process` spans). */
  consumer?: string;
  /** `Nats-Msg-Id` of the message, when known at the start. */
  messageId?: string;
  /** offsetsync's own attributes (`offsetsync.*`); they cannot replace the conventions' ones. */
  attributes?: Attributes;
}

/** Name and options of a messaging span, for `tracer.startSpan(name, options, parent)`. */
export function messagingSpan(spec: MessagingSpanSpec): { name: string; options: SpanOptions } {
  const attributes: Attributes = {
    ...spec.attributes,
    [ATTR_MESSAGING_SYSTEM_NAME]: MESSAGING_SYSTEM_NATS,
    // The name before semantic conventions 1.32; most tracing back ends still read it.
    [ATTR_MESSAGING_SYSTEM]: MESSAGING_SYSTEM_NATS,
    [ATTR_MESSAGING_OPERATION_NAME]: spec.operation,
    [ATTR_MESSAGING_OPERATION_TYPE]:
      spec.operation === 'publish'
        ? MESSAGING_OPERATION_TYPE_VALUE_SEND
        : MESSAGING_OPERATION_TYPE_VALUE_PROCESS,
    [ATTR_MESSAGING_DESTINATION_NAME]: spec.subject,
    [ATTR_MESSAGING_DESTINATION_TEMPLATE]: spec.subjectTemplate,
    'offsetsync.stage': spec.stage,
  };
  if (spec.consumer !== undefined) attributes[ATTR_MESSAGING_CONSUMER_GROUP_NAME] = spec.consumer;
  if (spec.messageId !== undefined) attributes[ATTR_MESSAGING_MESSAGE_ID] = spec.messageId;
  return {
    name: `${spec.operation} ${spec.subjectTemplate}`,
    options: {
      kind: spec.operation === 'publish' ? SpanKind.PRODUCER : SpanKind.CONSUMER,
      attributes,
    },
  };
}

/**
 * The `error.type` of a failure: the stable code of an OffsetSyncError, else the error's class name
 * (`_OTHER` for a thrown non-error), as the conventions ask for a low-cardinality class of error.
 */
function errorType(error: unknown): string {
  if (error instanceof OffsetSyncError) return error.code;
  if (error instanceof Error) return error.name;
  return '_OTHER';
}

/** Marks `span` failed by `error`: status ERROR with the message, `error.type`, and the exception event. */
export function failSpan(span: Span, error: unknown): void {
  const message = error instanceof Error ? error.message : String(error);
  span.recordException(error instanceof Error ? error : message);
  span.setAttribute(ATTR_ERROR_TYPE, errorType(error));
  span.setStatus({ code: SpanStatusCode.ERROR, message });
}
