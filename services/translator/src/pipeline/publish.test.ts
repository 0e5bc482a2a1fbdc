// The translator's OffsetTranslated messages against the wire of the build before the restructure
// (the golden fixtures of @offsetsync/harness): the same commit and translation give the same subject, message id,
// headers and payload bytes.
import { describe, expect, it } from 'vitest';
import {
  extractTraceContext,
  Names,
  OffsetCommitted,
  OffsetTranslated,
  TranslationOutcome,
} from '@offsetsync/contracts';
import { goldenEvents, goldenMessage } from '@offsetsync/harness';
import { outcomeName, translatedMessage } from './publish.js';

const translated = goldenEvents('OffsetTranslated');

describe('translatedMessage', () => {
  it('has golden fixtures to compare with, pending and final', () => {
    expect(translated.map((f) => f.msgId?.split(':').at(-1))).toEqual(
      expect.arrayContaining(['final', 'pending-3']),
    );
  });

  it.each(translated.map((f, i) => [`${i} ${f.msgId}`, f] as const))(
    'writes %s as the build before did',
    (_, fixture) => {
      const { headers: hdrs, data } = goldenMessage(fixture);
      const published = OffsetTranslated.decode(data);
      // The source commit and translation the translator had when it published this event.
      const event = OffsetCommitted.fromPartial({
        sourceCluster: published.sourceCluster,
        group: published.group,
        topic: published.topic,
        partition: published.partition,
        committedOffset: published.sourceOffset,
        version: published.version,
        commitTimestampMs: published.sourceCommitTimestampMs,
        observedAtMs: published.observedAtMs,
      });
      const translation = {
        outcome: published.outcome,
        method: published.method,
        refusalReason: published.refusalReason,
        targetOffset: published.targetOffset,
        detail: published.detail,
      };

      const message = translatedMessage(
        new Names('offsetsync'),
        {
          link: { source: published.sourceCluster, target: published.targetCluster },
          event,
          translation,
          attempts: published.attempts,
          translatedAtMs: published.translatedAtMs,
        },
        extractTraceContext(hdrs),
      );

      expect(message.subject).toBe(fixture.subject);
      expect(message.msgId).toBe(fixture.msgId);
      expect(Buffer.from(message.payload).toString('base64')).toBe(fixture.payload);
      const written: Record<string, string> = {};
      for (const k of message.headers?.keys() ?? []) written[k] = message.headers!.get(k);
      expect(written).toEqual(fixture.headers);
    },
  );
});

describe('outcomeName', () => {
  it('names every outcome for metrics and spans, never by number', () => {
    expect(
      [
        TranslationOutcome.TRANSLATION_OUTCOME_EXACT,
        TranslationOutcome.TRANSLATION_OUTCOME_INEXACT,
        TranslationOutcome.TRANSLATION_OUTCOME_PENDING,
        TranslationOutcome.TRANSLATION_OUTCOME_REFUSED,
        TranslationOutcome.TRANSLATION_OUTCOME_UNSPECIFIED,
      ].map(outcomeName),
    ).toEqual(['exact', 'inexact', 'pending', 'refused', 'unknown']);
  });
});
