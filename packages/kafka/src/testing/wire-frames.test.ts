import { describe, expect, it } from 'vitest';
import { KafkaWriter } from '../binary.js';
import { requestHeaderVersion } from './fake-broker.js';
import { FrameReader, parseRequestHeader, responseFrame } from './wire-frames.js';

function frame(payload: Buffer): Buffer {
  return Buffer.concat([new KafkaWriter().int32(payload.length).build(), payload]);
}

describe("the fake broker's framing", () => {
  it('cuts frames out of a stream split anywhere', () => {
    const stream = Buffer.concat([
      frame(Buffer.from('abc')),
      frame(Buffer.alloc(0)),
      frame(Buffer.from('de')),
    ]);
    const reader = new FrameReader();
    const frames = [...stream].flatMap((byte) => reader.push(Buffer.from([byte])));
    expect(frames.map((f) => f.toString())).toEqual(['abc', '', 'de']);
  });

  it('parses request header v1, and v2 (tagged fields) for flexible versions', () => {
    // Metadata v4 is not flexible (header v1); Metadata v12 is (header v2).
    expect([requestHeaderVersion(3, 4), requestHeaderVersion(3, 12), requestHeaderVersion(18, 3)]).toEqual([
      1, 2, 2,
    ]);
    const v1 = new KafkaWriter().int16(3).int16(4).int32(7).nullableString('client').int8(42).build();
    const one = parseRequestHeader(v1, requestHeaderVersion);
    expect(one).toMatchObject({ apiKey: 3, apiVersion: 4, correlationId: 7, clientId: 'client' });
    expect(one.body.int8()).toBe(42);
    const v2 = new KafkaWriter()
      .int16(3)
      .int16(12)
      .int32(8)
      .nullableString(null)
      .taggedFields([{ tag: 0, value: Buffer.from('x') }])
      .int8(43)
      .build();
    const two = parseRequestHeader(v2, requestHeaderVersion);
    expect(two).toMatchObject({ apiKey: 3, apiVersion: 12, correlationId: 8, clientId: null });
    expect(two.body.int8()).toBe(43);
  });

  it('writes response headers v0 and v1 around the body', () => {
    expect(responseFrame(5, 0, Buffer.from([9]))).toEqual(Buffer.from([0, 0, 0, 5, 0, 0, 0, 5, 9]));
    expect(responseFrame(5, 1, Buffer.from([9]))).toEqual(Buffer.from([0, 0, 0, 6, 0, 0, 0, 5, 0, 9]));
  });
});
