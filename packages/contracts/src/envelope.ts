// The envelope of every offsetsync event on JetStream: the subject, the `Nats-Msg-Id`, a header naming the
// event type (the protobuf message), the W3C trace context, and the protobuf payload. Every service encodes
// and decodes events here, so the envelope is written once.
import { ROOT_CONTEXT, type Context } from '@opentelemetry/api';
import { headers as natsHeaders, type MsgHdrs } from 'nats';
import {
  Heartbeat,
  OffsetApplied,
  OffsetCommitted,
  OffsetDeleted,
  OffsetTranslated,
} from './gen/offsetsync/v1/events.js';
import { extractTraceContext, injectTraceContext } from './trace-context.js';

/** Header naming the event type (the protobuf message) of every offsetsync stream message. */
export const EVENT_TYPE_HEADER = 'Offsetsync-Event';

/** Every event, discriminated by its type: the value of {@link EVENT_TYPE_HEADER}. */
export type OffsetSyncEvent =
  | { type: 'OffsetCommitted'; event: OffsetCommitted }
  | { type: 'OffsetDeleted'; event: OffsetDeleted }
  | { type: 'OffsetTranslated'; event: OffsetTranslated }
  | { type: 'OffsetApplied'; event: OffsetApplied }
  | { type: 'Heartbeat'; event: Heartbeat };

export type EventType = OffsetSyncEvent['type'];

/** The event of one type. */
export type EventOf<T extends EventType> = Extract<OffsetSyncEvent, { type: T }>;

interface Codec<M> {
  encode(message: M): { finish(): Uint8Array };
  decode(input: Uint8Array): M;
}

const CODECS: { [T in EventType]: Codec<EventOf<T>['event']> } = {
  OffsetCommitted,
  OffsetDeleted,
  OffsetTranslated,
  OffsetApplied,
  Heartbeat,
};

function isEventType(type: string): type is EventType {
  return Object.hasOwn(CODECS, type);
}

/** One event ready to publish. */
export interface EncodedEvent {
  subject: string;
  /** Becomes `Nats-Msg-Id`; undefined for messages that are never deduplicated (heartbeats). */
  msgId: string | undefined;
  headers: MsgHdrs;
  payload: Uint8Array;
}

/** Where an event goes and which trace it continues. */
export interface EventAddress {
  subject: string;
  msgId?: string;
  /** The context whose span the event continues; without one the message carries no trace context. */
  trace?: Context;
}

/** Encodes an event with its envelope. */
export function encodeEvent(event: OffsetSyncEvent, address: EventAddress): EncodedEvent {
  const headers = natsHeaders();
  headers.set(EVENT_TYPE_HEADER, event.type);
  if (address.trace !== undefined) injectTraceContext(headers, address.trace);
  const codec = CODECS[event.type] as Codec<OffsetSyncEvent['event']>;
  return {
    subject: address.subject,
    msgId: address.msgId,
    headers,
    payload: codec.encode(event.event).finish(),
  };
}

/** A message as JetStream delivers it (JsMsg and StoredMsg both fit). */
export interface ReceivedMessage {
  readonly headers?: MsgHdrs | undefined;
  readonly data: Uint8Array;
}

/** Why a message is not an event the reader takes. */
export type DecodeFailureReason =
  /** No type header, and the reader names no type to assume. */
  | 'MISSING_TYPE'
  /** A type this build does not know. */
  | 'UNKNOWN_TYPE'
  /** A known type the reader does not take on this stream. */
  | 'UNEXPECTED_TYPE'
  /** The payload is not a valid protobuf message of its type. */
  | 'UNDECODABLE';

export type DecodeResult<T extends EventType> =
  | ({ ok: true; trace: Context } & EventOf<T>)
  | { ok: false; reason: DecodeFailureReason; type: string; detail: string };

export interface DecodeOptions<T extends EventType> {
  /** The types the reader takes; any other type is UNEXPECTED_TYPE. */
  accept: readonly T[];
  /** The type assumed for a message without a type header (default: none, MISSING_TYPE). */
  typeWhenMissing?: T;
}

/** Decodes a message's envelope and payload; never throws. */
export function decodeEvent<T extends EventType>(
  message: ReceivedMessage,
  options: DecodeOptions<T>,
): DecodeResult<T> {
  const header = message.headers?.get(EVENT_TYPE_HEADER) ?? '';
  const type = header === '' ? options.typeWhenMissing : header;
  if (type === undefined)
    return { ok: false, reason: 'MISSING_TYPE', type: '', detail: `no ${EVENT_TYPE_HEADER} header` };
  if (!isEventType(type))
    return { ok: false, reason: 'UNKNOWN_TYPE', type, detail: `unknown event type ${type}` };
  if (!(options.accept as readonly string[]).includes(type))
    return { ok: false, reason: 'UNEXPECTED_TYPE', type, detail: `event type ${type}` };
  let event: OffsetSyncEvent['event'];
  try {
    event = (CODECS[type] as Codec<OffsetSyncEvent['event']>).decode(message.data);
  } catch (error: unknown) {
    return {
      ok: false,
      reason: 'UNDECODABLE',
      type,
      detail: `undecodable ${type}: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
  const trace = message.headers === undefined ? ROOT_CONTEXT : extractTraceContext(message.headers);
  return { ok: true, type, event, trace } as DecodeResult<T>;
}
