import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ErrorCodes, isOffsetSyncError } from '@offsetsync/contracts';
import { comparePositions, decodePageToken, encodePageToken } from './page-token.js';

const filters = fc.record({
  sourceCluster: fc.string(),
  targetCluster: fc.string(),
  groupPrefix: fc.string(),
  state: fc.nat(6),
});
const position = fc.record({ source: fc.string(), target: fc.string(), group: fc.string() });

describe('page tokens', () => {
  it('decode to the position they encode, for the same filters (property)', () => {
    fc.assert(
      fc.property(position, filters, (after, f) => {
        expect(decodePageToken(encodePageToken(after, f), f)).toEqual(after);
      }),
    );
  });

  it('are rejected with a typed error for other filters or arbitrary text (property)', () => {
    fc.assert(
      fc.property(position, filters, filters, (after, f, g) => {
        fc.pre(JSON.stringify(f) !== JSON.stringify(g));
        expect(() => decodePageToken(encodePageToken(after, f), g)).toThrow(/filters changed/);
      }),
    );
    fc.assert(
      fc.property(fc.string(), filters, (text, f) => {
        try {
          decodePageToken(text, f);
        } catch (error: unknown) {
          expect(isOffsetSyncError(error) && error.code === ErrorCodes.DECODE_ERROR).toBe(true);
        }
      }),
    );
  });

  it('order positions by source, target, then group', () => {
    const sorted = [
      { source: 'b', target: 'a', group: 'a' },
      { source: 'a', target: 'b', group: 'a' },
      { source: 'a', target: 'a', group: 'z' },
    ].sort(comparePositions);
    expect(sorted.map((p) => `${p.source}${p.target}${p.group}`)).toEqual(['aaz', 'aba', 'baa']);
  });
});
