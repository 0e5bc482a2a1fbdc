import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  decodeAppliedRecord,
  EMPTY_RECORD,
  encodeAppliedRecord,
  type AppliedRecord,
} from './applied-record.js';

const recordArb: fc.Arbitrary<AppliedRecord> = fc
  .record({
    version: fc.option(fc.record({ offsetsPartition: fc.nat(49), offsetsOffset: fc.maxSafeNat() }), {
      nil: null,
    }),
    targetOffset: fc.integer({ min: -1, max: Number.MAX_SAFE_INTEGER }),
    appliedAtMs: fc.maxSafeNat(),
    sourceCommitTimestampMs: fc.maxSafeInteger(),
    targetOwnedSinceMs: fc.option(fc.maxSafeNat(), { nil: undefined }),
  })
  .map(({ targetOwnedSinceMs, ...rest }) =>
    targetOwnedSinceMs === undefined ? rest : { ...rest, targetOwnedSinceMs },
  );

const bytes = (text: string) => new TextEncoder().encode(text);

describe('applied-versions record', () => {
  it('decodes what it encodes', () => {
    fc.assert(
      fc.property(recordArb, (record) => {
        expect(decodeAppliedRecord(encodeAppliedRecord(record))).toEqual(record);
      }),
    );
  });

  it('is small JSON with the documented field names', () => {
    const json = JSON.parse(
      new TextDecoder().decode(
        encodeAppliedRecord({
          version: { offsetsPartition: 3, offsetsOffset: 17 },
          targetOffset: 42,
          appliedAtMs: 1000,
          sourceCommitTimestampMs: 900,
        }),
      ),
    ) as unknown;
    expect(json).toEqual({
      version: { offsetsPartition: 3, offsetsOffset: 17 },
      targetOffset: 42,
      appliedAtMs: 1000,
      sourceCommitTimestampMs: 900,
    });
    expect(decodeAppliedRecord(encodeAppliedRecord(EMPTY_RECORD))).toEqual(EMPTY_RECORD);
  });

  it('refuses what it did not write', () => {
    for (const text of [
      'nope',
      '[]',
      '{}',
      '{"version":{"offsetsPartition":-1,"offsetsOffset":0},"targetOffset":1,"appliedAtMs":0,"sourceCommitTimestampMs":0}',
      '{"version":null,"targetOffset":"1","appliedAtMs":0,"sourceCommitTimestampMs":0}',
      '{"version":null,"targetOffset":-1,"appliedAtMs":0,"sourceCommitTimestampMs":0,"targetOwnedSinceMs":-4}',
    ]) {
      expect(() => decodeAppliedRecord(bytes(text)), text).toThrow(
        expect.objectContaining({ code: 'DECODE_ERROR' }),
      );
    }
  });
});
