import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { durationMs, formatDuration, parseDuration } from './duration.js';

describe('parseDuration', () => {
  it.each([
    ['250ms', 250],
    ['5s', 5_000],
    ['1.5s', 1_500],
    ['2m', 120_000],
    ['1h', 3_600_000],
    ['0ms', 0],
    [0, 0],
    [1234, 1234],
  ])('parses %j as %d ms', (input, ms) => {
    expect(parseDuration(input)).toEqual({ ok: true, ms });
  });

  it.each([['5'], ['5 sec'], ['-1s'], ['1.0005s'], ['s'], [''], [-1], [1.5], [true], [null]])(
    'rejects %j',
    (input) => {
      expect(parseDuration(input).ok).toBe(false);
    },
  );

  it('round-trips through formatDuration', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1_000 * 3_600_000 }), (ms) => {
        expect(parseDuration(formatDuration(ms))).toEqual({ ok: true, ms });
      }),
    );
  });

  it('accepts any whole amount of any unit', () => {
    const units = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 } as const;
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 100_000 }), fc.constantFrom('ms', 's', 'm', 'h'), (n, unit) => {
        expect(parseDuration(`${n}${unit}`)).toEqual({ ok: true, ms: n * units[unit] });
      }),
    );
  });
});

describe('formatDuration', () => {
  it('uses the largest exact unit', () => {
    expect(formatDuration(0)).toBe('0ms');
    expect(formatDuration(1_500)).toBe('1500ms');
    expect(formatDuration(5_000)).toBe('5s');
    expect(formatDuration(90_000)).toBe('90s');
    expect(formatDuration(120_000)).toBe('2m');
    expect(formatDuration(7_200_000)).toBe('2h');
  });
});

describe('durationMs schema', () => {
  it('outputs milliseconds', () => {
    expect(durationMs().parse('2m')).toBe(120_000);
    expect(durationMs().parse(50)).toBe(50);
  });

  it('enforces bounds with the value in the message', () => {
    const result = durationMs({ max: 5_000 }).safeParse('6s');
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.message).toBe('must be at most 5s, got 6s');
    expect(durationMs({ min: 1 }).safeParse(0).success).toBe(false);
  });

  it('explains a malformed string', () => {
    const result = durationMs().safeParse('five seconds');
    expect(result.error?.issues[0]?.message).toMatch(/invalid duration "five seconds"/);
  });
});
