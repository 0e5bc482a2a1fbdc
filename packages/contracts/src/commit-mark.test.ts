import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatCommitMetadata, parseCommitMetadata } from './commit-mark.js';

describe('commit mark', () => {
  it('round-trips any mark with any original metadata', () => {
    fc.assert(
      fc.property(
        fc.stringMatching(/^[a-z][a-z0-9-]{0,31}$/),
        fc.nat({ max: 1000 }),
        fc.maxSafeNat(),
        fc.string(),
        (origin, offsetsPartition, offsetsOffset, original) => {
          const metadata = formatCommitMetadata({ origin, offsetsPartition, offsetsOffset }, original);
          expect(parseCommitMetadata(metadata)).toEqual({
            mark: { origin, offsetsPartition, offsetsOffset },
            originalMetadata: original,
          });
        },
      ),
    );
  });

  it("treats metadata without a well-formed mark as the application's own", () => {
    for (const metadata of [
      null,
      undefined,
      '',
      'osync1',
      'osync1|a|x|1|',
      'osync1|a|1|',
      'osync1||1|2|',
      'app data',
    ]) {
      expect(parseCommitMetadata(metadata)).toBeUndefined();
    }
  });

  it('refuses an origin alias that would break the format', () => {
    expect(() => formatCommitMetadata({ origin: 'a|b', offsetsPartition: 0, offsetsOffset: 0 }, '')).toThrow(
      RangeError,
    );
  });
});
