// Kafka's framing as a broker sees it, for the fake broker: size-prefixed frames off a TCP stream,
// request headers v1 and v2 (v2 adds tagged fields, for flexible API versions), response headers v0 and
// v1 around a body. Test code only.
import { KafkaReader, KafkaWriter } from '../binary.js';

/** A parsed request header; `body` reads what follows it. */
export interface RequestHeader {
  apiKey: number;
  apiVersion: number;
  correlationId: number;
  clientId: string | null;
  body: KafkaReader;
}

/** Cuts a byte stream into frames (int32 size, then that many bytes). */
export class FrameReader {
  private pending: Buffer = Buffer.alloc(0);

  /** The frames completed by `chunk`, in order; a partial frame waits for the next chunk. */
  push(chunk: Buffer): Buffer[] {
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    const frames: Buffer[] = [];
    while (this.pending.length >= 4) {
      const size = this.pending.readInt32BE(0);
      if (this.pending.length < 4 + size) break;
      frames.push(this.pending.subarray(4, 4 + size));
      this.pending = this.pending.subarray(4 + size);
    }
    return frames;
  }
}

/**
 * Parses a request frame's header. `headerVersion` says which header the API version uses: 1 (api key,
 * api version, correlation id, client id) or 2 (the same, then tagged fields).
 */
export function parseRequestHeader(
  frame: Buffer,
  headerVersion: (apiKey: number, apiVersion: number) => 1 | 2,
): RequestHeader {
  const reader = new KafkaReader(frame);
  const apiKey = reader.int16();
  const apiVersion = reader.int16();
  const correlationId = reader.int32();
  const clientId = reader.nullableString();
  if (headerVersion(apiKey, apiVersion) === 2) reader.taggedFields();
  return { apiKey, apiVersion, correlationId, clientId, body: reader };
}

/** A response frame: size, correlation id, (v1: empty tagged fields), body. */
export function responseFrame(correlationId: number, headerVersion: 0 | 1, body: Buffer): Buffer {
  const header = new KafkaWriter().int32(correlationId);
  if (headerVersion === 1) header.taggedFields();
  const payload = Buffer.concat([header.build(), body]);
  return Buffer.concat([new KafkaWriter().int32(payload.length).build(), payload]);
}

/** Reads an int32-counted array (-1: null). */
export function readArray<T>(reader: KafkaReader, read: (reader: KafkaReader) => T): T[] | null {
  const count = reader.int32();
  if (count < 0) return null;
  return Array.from({ length: count }, () => read(reader));
}

/** Writes an int32-counted array. */
export function writeArray<T>(writer: KafkaWriter, items: readonly T[], write: (item: T) => void): void {
  writer.int32(items.length);
  for (const item of items) write(item);
}
