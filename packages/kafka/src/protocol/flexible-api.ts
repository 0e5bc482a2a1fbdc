// Requests that kafkajs 2.2.4 has no encoder for (ListGroups v4+ with its filters, ConsumerGroupDescribe),
// encoded and decoded here over binary.ts. They are flexible versions, which kafkajs never speaks itself:
// its connection writes request header v1 (api key, version, correlation id, client id) and hands a
// response on after the correlation id. So the body written here starts with the empty tagged-field
// section that turns header v1 into header v2, and the decoder first reads the tagged fields of response
// header v1. Pure: network/send-request.ts sends them.
import { ErrorCodes, OffsetSyncError } from '@offsetsync/contracts';
import { KafkaReader, KafkaWriter } from '../binary.js';

/** One API encoded by this package: the versions it implements, and their encoder and decoder. */
export interface FlexibleApi<Args, Response> {
  /** Kafka's name of the API, for logs and request events. */
  name: string;
  apiKey: number;
  /** The versions implemented, every one flexible, ascending. */
  versions: readonly number[];
  /** Writes the request body of `version` (what follows the request header). */
  encode(writer: KafkaWriter, version: number, args: Args): void;
  /** Reads the response body of `version` (what follows the response header). */
  decode(reader: KafkaReader, version: number): Response;
}

/** The bytes after request header v1: the header's (empty) tagged fields, then the body. */
export function encodeFlexibleRequest<A>(api: FlexibleApi<A, unknown>, version: number, args: A): Buffer {
  const writer = new KafkaWriter().taggedFields();
  api.encode(writer, version, args);
  return writer.build();
}

/**
 * The response after its correlation id: response header v1's tagged fields, then the body, which must
 * end where the bytes end (anything else is a version mismatch, not a response to trust).
 */
export function decodeFlexibleResponse<R>(api: FlexibleApi<unknown, R>, version: number, raw: Buffer): R {
  const reader = new KafkaReader(raw);
  reader.taggedFields();
  const response = api.decode(reader, version);
  if (reader.remaining !== 0) {
    throw new OffsetSyncError(`${api.name} v${version}: ${reader.remaining} bytes left after the response`, {
      code: ErrorCodes.DECODE_ERROR,
    });
  }
  return response;
}
