// The committer's OffsetApplied messages against the wire of the build before the restructure
// (the golden fixtures of @offsetsync/harness): the same translation and report give the same subject, message id,
// headers and payload bytes.
import { describe, expect, it } from 'vitest';
import {
  extractTraceContext,
  Names,
  OffsetApplied,
  OffsetTranslated,
  SkipReason,
  TranslationOutcome,
} from '@offsetsync/contracts';
import { goldenEvents, goldenMessage } from '@offsetsync/harness';
import { appliedMessage } from './reports.js';
import type { AppliedOutcomeName } from './work-item.js';

const OUTCOMES: Record<number, AppliedOutcomeName> = {
  [SkipReason.SKIP_REASON_UNSPECIFIED]: 'APPLIED',
  [SkipReason.SKIP_REASON_STALE_VERSION]: 'STALE_VERSION',
  [SkipReason.SKIP_REASON_ACTIVE_ON_TARGET]: 'ACTIVE_ON_TARGET',
  [SkipReason.SKIP_REASON_TARGET_AHEAD]: 'TARGET_AHEAD',
  [SkipReason.SKIP_REASON_COMMIT_FAILED]: 'COMMIT_FAILED',
};

const applied = goldenEvents('OffsetApplied');

describe('appliedMessage', () => {
  it('has golden fixtures to compare with', () => {
    expect(applied.length).toBeGreaterThan(0);
  });

  it.each(applied.map((f) => [f.msgId, f] as const))('writes %s as the build before did', (_, fixture) => {
    const { headers: hdrs, data } = goldenMessage(fixture);
    const event = OffsetApplied.decode(data);
    // The translation and report the committer had when it published this event.
    const translation = OffsetTranslated.fromPartial({
      sourceCluster: event.sourceCluster,
      targetCluster: event.targetCluster,
      group: event.group,
      topic: event.topic,
      partition: event.partition,
      sourceOffset: event.sourceOffset,
      outcome: event.exact
        ? TranslationOutcome.TRANSLATION_OUTCOME_EXACT
        : TranslationOutcome.TRANSLATION_OUTCOME_INEXACT,
      version: event.version,
      sourceCommitTimestampMs: event.sourceCommitTimestampMs,
    });
    const report = {
      outcome: OUTCOMES[event.skipReason]!,
      targetOffset: event.targetOffset,
      detail: event.detail,
      appliedAtMs: event.appliedAtMs,
    };

    const message = appliedMessage(
      new Names('offsetsync'),
      { source: event.sourceCluster, target: event.targetCluster, mode: 'commit' },
      { translation, version: event.version!, report },
      extractTraceContext(hdrs),
    );

    expect(message.subject).toBe(fixture.subject);
    expect(message.msgId).toBe(fixture.msgId);
    expect(Buffer.from(message.payload).toString('base64')).toBe(fixture.payload);
    const written: Record<string, string> = {};
    for (const k of message.headers?.keys() ?? []) written[k] = message.headers!.get(k);
    expect(written).toEqual(fixture.headers);
  });
});
