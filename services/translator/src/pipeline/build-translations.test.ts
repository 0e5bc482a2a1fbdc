import { describe, expect, it } from 'vitest';
import { AnchorStatus, OffsetCommitted, TranslationMethod, TranslationOutcome } from '@offsetsync/contracts';
import { buildTranslation, EXHAUSTED_ATTEMPTS_BEFORE_FALLBACK } from './build-translations.js';

const event = OffsetCommitted.fromPartial({
  anchorStatus: AnchorStatus.ANCHOR_STATUS_RESOLVED,
  nextRecord: { offset: 5, timestampMs: 1, fingerprint: 'f' },
  observedAtMs: 1_000,
});
const bounds = { logStartOffset: 0, highWatermark: 100 };

describe('buildTranslation', () => {
  it('waits for a record that has not arrived until pendingFallbackAfterMs, then falls back to the timestamp offset', () => {
    const located = {
      location: { kind: 'not-arrived' as const, detail: 'not yet', fallbackOffset: 8 },
      bounds,
    };
    const at = (nowMs: number, pendingFallbackAfterMs: number) =>
      buildTranslation(event, located, { nowMs, deliveryCount: 1, pendingFallbackAfterMs });
    expect(at(5_999, 5_000).outcome).toBe(TranslationOutcome.TRANSLATION_OUTCOME_PENDING);
    expect(at(6_000, 5_000)).toMatchObject({
      outcome: TranslationOutcome.TRANSLATION_OUTCOME_INEXACT,
      method: TranslationMethod.TRANSLATION_METHOD_TIMESTAMP_FALLBACK,
      targetOffset: 8,
    });
    // 0: never give up.
    expect(at(1_000_000, 0).outcome).toBe(TranslationOutcome.TRANSLATION_OUTCOME_PENDING);
  });

  it('searches an exhausted window again before the delivery that may fall back', () => {
    const located = {
      location: { kind: 'window-exhausted' as const, fallbackOffset: 3, detail: 'ran out' },
      bounds,
    };
    const on = (deliveryCount: number) =>
      buildTranslation(event, located, { nowMs: 1_000, deliveryCount, pendingFallbackAfterMs: 0 }).outcome;
    expect(on(EXHAUSTED_ATTEMPTS_BEFORE_FALLBACK - 1)).toBe(TranslationOutcome.TRANSLATION_OUTCOME_PENDING);
    expect(on(EXHAUSTED_ATTEMPTS_BEFORE_FALLBACK)).toBe(TranslationOutcome.TRANSLATION_OUTCOME_INEXACT);
  });
});
