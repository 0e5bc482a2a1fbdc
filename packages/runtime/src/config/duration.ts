import { z } from 'zod';

/** Milliseconds per duration unit accepted in configuration strings. */
const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 } as const;
type DurationUnit = keyof typeof UNIT_MS;

const EXPECTED_DURATION = 'expected a duration such as 250ms, 5s, 2m, 1h, or a whole number of milliseconds';
const DURATION_PATTERN = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/;

/**
 * Parses a duration: a non-negative integer number of milliseconds, or a decimal number followed by one
 * unit (`250ms`, `5s`, `1.5s`, `2m`, `1h`). Returns milliseconds, or an error message. A value that is not
 * a whole number of milliseconds is an error, not rounded.
 */
export function parseDuration(input: unknown): { ok: true; ms: number } | { ok: false; message: string } {
  if (typeof input === 'number') {
    if (Number.isSafeInteger(input) && input >= 0) return { ok: true, ms: input };
    return { ok: false, message: `expected a non-negative whole number of milliseconds, got ${input}` };
  }
  if (typeof input !== 'string') {
    return { ok: false, message: EXPECTED_DURATION };
  }
  const match = DURATION_PATTERN.exec(input.trim());
  if (match === null) {
    return {
      ok: false,
      message: `invalid duration ${JSON.stringify(input)}: expected a number followed by ms, s, m or h (for example 250ms, 5s, 2m, 1h)`,
    };
  }
  const [, amount = '', unit = 'ms'] = match;
  const ms = Number(amount) * UNIT_MS[unit as DurationUnit];
  // Decimal fractions are not exact in binary; accept results within a rounding error of a whole number.
  const whole = Math.round(ms);
  if (Math.abs(ms - whole) > 1e-6 || !Number.isSafeInteger(whole)) {
    return {
      ok: false,
      message: `invalid duration ${JSON.stringify(input)}: not a whole number of milliseconds`,
    };
  }
  return { ok: true, ms: whole };
}

/** Formats milliseconds with the largest unit that divides them exactly (`5000` -> `5s`, `1500` -> `1500ms`). */
export function formatDuration(ms: number): string {
  if (ms !== 0) {
    for (const unit of ['h', 'm', 's'] as const) {
      if (ms % UNIT_MS[unit] === 0) return `${ms / UNIT_MS[unit]}${unit}`;
    }
  }
  return `${ms}ms`;
}

/** Schemas built by {@link durationMs}; lets the config introspection tell a duration from a plain number. */
const durationSchemas = new WeakSet<z.ZodType>();

/** Whether `schema` is a duration built by {@link durationMs} (wrappers such as `.optional()` excluded). */
export function isDurationSchema(schema: z.ZodType): boolean {
  return durationSchemas.has(schema);
}

/** Bounds of a {@link durationMs} field, in milliseconds (inclusive). */
export interface DurationBounds {
  min?: number;
  max?: number;
}

/**
 * A configuration duration: accepts a non-negative integer number of milliseconds or a string such as
 * `250ms`, `5s`, `2m`, `1h`, and outputs milliseconds. Fields using it end in `Ms`.
 */
export function durationMs(bounds: DurationBounds = {}): z.ZodType<number, number | string> {
  const schema = z.union([z.number(), z.string()], { error: EXPECTED_DURATION }).transform((input, ctx) => {
    const parsed = parseDuration(input);
    if (!parsed.ok) {
      ctx.addIssue({ code: 'custom', message: parsed.message, input });
      return z.NEVER;
    }
    if (bounds.min !== undefined && parsed.ms < bounds.min) {
      ctx.addIssue({
        code: 'custom',
        message: `must be at least ${formatDuration(bounds.min)}, got ${formatDuration(parsed.ms)}`,
        input,
      });
      return z.NEVER;
    }
    if (bounds.max !== undefined && parsed.ms > bounds.max) {
      ctx.addIssue({
        code: 'custom',
        message: `must be at most ${formatDuration(bounds.max)}, got ${formatDuration(parsed.ms)}`,
        input,
      });
      return z.NEVER;
    }
    return parsed.ms;
  });
  durationSchemas.add(schema);
  return schema;
}
