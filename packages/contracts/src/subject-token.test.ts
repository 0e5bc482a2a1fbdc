import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeSubjectToken, encodeSubjectToken } from './subject-token.js';

const SUBJECT_TOKEN_SAFE = /^[^\s.*>]+$/;
const KV_KEY_SAFE = /^[-/_=.a-zA-Z0-9]+$/;

describe('subject token encoding', () => {
  it('round-trips any well-formed string', () => {
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
});
