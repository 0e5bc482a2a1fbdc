import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RefusalReason, TranslationMethod, TranslationOutcome } from '@offsetsync/contracts';
import type { Translation } from '../translation-plan.js';
import { PendingTranslations, pendingRetryDelayMs, settlementOf } from './schedule-pending.js';

const translation = (outcome: TranslationOutcome): Translation => ({
  outcome,
  method: TranslationMethod.TRANSLATION_METHOD_NONE,
  refusalReason: RefusalReason.REFUSAL_REASON_UNSPECIFIED,
  targetOffset: -1,
  detail: '',
});
const retry = { minMs: 50, maxMs: 500 };

describe('pendingRetryDelayMs', () => {
  it('doubles from the minimum with each delivery, up to the maximum', () => {
    expect([1, 2, 3, 4, 5, 100].map((attempt) => pendingRetryDelayMs(attempt, retry))).toEqual([
      50, 100, 200, 400, 500, 500,
    ]);
    fc.assert(
      fc.property(fc.integer({ min: -5, max: 10_000 }), (attempt) => {
        const delay = pendingRetryDelayMs(attempt, retry);
        expect(delay).toBeGreaterThanOrEqual(retry.minMs);
        expect(delay).toBeLessThanOrEqual(retry.maxMs);
      }),
    );
  });
});

describe('settlementOf and PendingTranslations', () => {
  it('hands a pending translation back with its delay, acknowledges every other, and counts the waiting keys', () => {
    const pending = new PendingTranslations();
    const waiting = settlementOf(translation(TranslationOutcome.TRANSLATION_OUTCOME_PENDING), 3, retry);
    expect(waiting).toEqual({ kind: 'nak', delayMs: 200 });
    pending.settled('a', waiting);
    pending.settled('b', waiting);
    expect(pending.size).toBe(2);
    for (const outcome of [
      TranslationOutcome.TRANSLATION_OUTCOME_EXACT,
      TranslationOutcome.TRANSLATION_OUTCOME_INEXACT,
      TranslationOutcome.TRANSLATION_OUTCOME_REFUSED,
    ]) {
      expect(settlementOf(translation(outcome), 3, retry)).toEqual({ kind: 'ack' });
    }
    pending.settled('a', { kind: 'ack' });
    expect(pending.size).toBe(1);
  });

  it('forgets a key handed back that never comes back (another instance took it), and keeps one that does', () => {
    let now = 0;
    const pending = new PendingTranslations(() => now, 60_000);
    pending.settled('taken-elsewhere', { kind: 'nak', delayMs: 500 });
    pending.settled('waiting-here', { kind: 'nak', delayMs: 500 });
    // The one still waiting here is handed back again at each delivery; the other is never seen again.
    for (now = 500; now <= 120_000; now += 500)
      pending.settled('waiting-here', { kind: 'nak', delayMs: 500 });
    expect(pending.size).toBe(1);
    now = 60_500;
    const fresh = new PendingTranslations(() => now, 60_000);
    fresh.settled('k', { kind: 'nak', delayMs: 500 });
    now += 500 + 60_000;
    expect(fresh.size).toBe(1);
    now += 1;
    expect(fresh.size).toBe(0);
  });

  it('stays bounded by the keys handed back within the window, however many went elsewhere', () => {
    fc.assert(
      fc.property(fc.array(fc.nat(50), { minLength: 100, maxLength: 500 }), (keys) => {
        let now = 0;
        const pending = new PendingTranslations(() => now, 1_000);
        for (const key of keys) {
          pending.settled(`k${key}`, { kind: 'nak', delayMs: 100 });
          now += 50;
        }
        // Only the keys handed back in the last 1,100 ms (22 settlements) can still be waiting.
        expect(pending.size).toBeLessThanOrEqual(Math.min(22, new Set(keys).size));
      }),
    );
  });
});
