import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeSubjectToken, encodeSubjectToken, MAX_TOKEN_LENGTH } from './subject-token.js';

const SUBJECT_TOKEN_SAFE = /^[^\s.*>]+$/;
const KV_KEY_SAFE = /^[-/_=.a-zA-Z0-9]+$/;

describe('subject token encoding', () => {
  it('round-trips any well-formed string that stays readable', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), (value) => {
        expect(decodeSubjectToken(encodeSubjectToken(value))).toBe(value);
      }),
      { numRuns: 2000 },
    );
  });

  it('produces tokens that are valid NATS subject tokens and KV key parts', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (value) => {
        const token = encodeSubjectToken(value);
        expect(token).toMatch(SUBJECT_TOKEN_SAFE);
        expect(token).toMatch(KV_KEY_SAFE);
        expect(token).not.toContain('.');
      }),
      { numRuns: 2000 },
    );
  });

  it('never maps two different strings to the same token', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme-ascii' }), fc.string({ unit: 'grapheme-ascii' }), (a, b) => {
        fc.pre(a !== b);
        expect(encodeSubjectToken(a)).not.toBe(encodeSubjectToken(b));
      }),
      { numRuns: 5000 },
    );
  });

  it('keeps readable names readable and escapes the characters NATS reserves', () => {
    expect(encodeSubjectToken('orders-service_v2')).toBe('orders-service_v2');
    expect(encodeSubjectToken('a.b')).toBe('a=2Eb');
    expect(encodeSubjectToken('*')).toBe('=2A');
    expect(encodeSubjectToken('>')).toBe('=3E');
    expect(encodeSubjectToken('my group')).toBe('my=20group');
    expect(encodeSubjectToken('=')).toBe('=3D');
    expect(encodeSubjectToken('')).toBe('=');
    expect(encodeSubjectToken('é')).toBe('=C3=A9');
  });

  it('rejects tokens it could not have produced', () => {
    expect(() => decodeSubjectToken('')).toThrow(RangeError);
    expect(() => decodeSubjectToken('a.b')).toThrow(RangeError);
    expect(() => decodeSubjectToken('=4')).toThrow(RangeError);
    expect(() => decodeSubjectToken('=zz')).toThrow(RangeError);
    // 'a' escaped is decodable but not canonical, so it would alias the plain token 'a'.
    expect(() => decodeSubjectToken('=61')).toThrow(RangeError);
    // An escape sequence that is not UTF-8.
    expect(() => decodeSubjectToken('=FF')).toThrow(RangeError);
  });

  describe('a value too long for a readable token (a group id of thousands of characters)', () => {
    // Strings longer than the longest readable token, of any characters.
    const longValue = fc
      .tuple(
        fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 }),
        fc.integer({ min: MAX_TOKEN_LENGTH + 1, max: 12_000 }),
      )
      .map(([unit, times]) => unit.repeat(Math.ceil(times / unit.length)));

    it('is hashed into a bounded token that is still a subject token and a KV key part', () => {
      fc.assert(
        fc.property(longValue, (value) => {
          const token = encodeSubjectToken(value);
          expect(token.length).toBeLessThanOrEqual(MAX_TOKEN_LENGTH);
          expect(token).toMatch(SUBJECT_TOKEN_SAFE);
          expect(token).toMatch(KV_KEY_SAFE);
          expect(encodeSubjectToken(value)).toBe(token);
        }),
        { numRuns: 300 },
      );
    });

    it('never maps two different values to the same token, hashed or not', () => {
      fc.assert(
        fc.property(longValue, fc.string({ maxLength: 20 }), (value, suffix) => {
          fc.pre(suffix.length > 0);
          const other = value + suffix;
          expect(encodeSubjectToken(value)).not.toBe(encodeSubjectToken(other));
          // A readable token never equals a hashed one: '==' occurs only in hashed tokens.
          expect(encodeSubjectToken(suffix)).not.toContain('==');
        }),
        { numRuns: 300 },
      );
    });

    it('keeps a readable head of whole escapes and says it cannot be decoded', () => {
      const group = 'ä'.repeat(5_000); // each 'ä' escapes to '=C3=A4'
      const token = encodeSubjectToken(group);
      expect(token).toMatch(/^(=C3=A4)+==[0-9a-f]{64}$/);
      expect(() => decodeSubjectToken(token)).toThrow(/hashed/);
      // The longest value that stays readable is untouched.
      expect(encodeSubjectToken('g'.repeat(MAX_TOKEN_LENGTH))).toBe('g'.repeat(MAX_TOKEN_LENGTH));
      expect(encodeSubjectToken('g'.repeat(MAX_TOKEN_LENGTH + 1))).toMatch(/^g{64}==[0-9a-f]{64}$/);
    });
  });
});
