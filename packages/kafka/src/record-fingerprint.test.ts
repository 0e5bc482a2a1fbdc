import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { recordFingerprint } from './record-fingerprint.js';

const bytesOrNull = fc.option(
  fc.uint8Array({ maxLength: 64 }).map((a) => Buffer.from(a)),
  { nil: null },
);

describe('recordFingerprint', () => {
  it('keeps its published format (fingerprints travel between services and versions)', () => {
    // SHA-256 of 00000005 'key-1' 00000007 'value-1', first 16 bytes.
    expect(recordFingerprint(Buffer.from('key-1'), Buffer.from('value-1'))).toBe(
      '3e992b5650c166444960db5e8bb93593',
    );
    // SHA-256 of ffffffff ffffffff.
    expect(recordFingerprint(null, null)).toBe('12a3ae445661ce5dee78d0650d33362d');
  });

  it('is 32 lowercase hex digits', () => {
    fc.assert(
      fc.property(bytesOrNull, bytesOrNull, (key, value) => {
        expect(recordFingerprint(key, value)).toMatch(/^[0-9a-f]{32}$/);
      }),
    );
  });

  it('tells a null key or value from an empty one', () => {
    const empty = Buffer.alloc(0);
    const all = new Set([
      recordFingerprint(null, null),
      recordFingerprint(null, empty),
      recordFingerprint(empty, null),
      recordFingerprint(empty, empty),
    ]);
    expect(all.size).toBe(4);
  });

  it('cannot be made to collide by moving the boundary between key and value', () => {
    expect(recordFingerprint(Buffer.from('ab'), Buffer.from('c'))).not.toBe(
      recordFingerprint(Buffer.from('a'), Buffer.from('bc')),
    );
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 1, maxLength: 64 }), fc.nat(), fc.nat(), (bytes, a, b) => {
        const all = Buffer.from(bytes);
        const i = a % (all.length + 1);
        const j = b % (all.length + 1);
        fc.pre(i !== j);
        const first = recordFingerprint(all.subarray(0, i), all.subarray(i));
        const second = recordFingerprint(all.subarray(0, j), all.subarray(j));
        expect(first).not.toBe(second);
      }),
    );
  });

  it('depends on the content only (equal bytes, equal fingerprint; different bytes, different one)', () => {
    fc.assert(
      fc.property(bytesOrNull, bytesOrNull, bytesOrNull, bytesOrNull, (k1, v1, k2, v2) => {
        const same = sameBytes(k1, k2) && sameBytes(v1, v2);
        const copy = (b: Buffer | null) => (b === null ? null : Buffer.from(b));
        expect(recordFingerprint(k1, v1)).toBe(recordFingerprint(copy(k1), copy(v1)));
        if (!same) expect(recordFingerprint(k1, v1)).not.toBe(recordFingerprint(k2, v2));
      }),
    );
  });
});

function sameBytes(a: Buffer | null, b: Buffer | null): boolean {
  if (a === null || b === null) return a === b;
  return a.equals(b);
}
