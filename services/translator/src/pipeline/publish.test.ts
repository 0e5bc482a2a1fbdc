// The translator's OffsetTranslated messages against the wire of the build before the restructure
// (the golden fixtures of @offsetsync/harness): the same commit and translation give the same subject, message id,
// headers and payload bytes. And the order of the translations of one key: which one the translated
// stream keeps, whatever order they arrive in.
import { ROOT_CONTEXT } from '@opentelemetry/api';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  compareVersions,
  extractTraceContext,
  Names,
  OffsetCommitted,
  OffsetTranslated,
  RefusalReason,
  TranslationMethod,
  TranslationOutcome,
  type Version,
} from '@offsetsync/contracts';
import { goldenEvents, goldenMessage } from '@offsetsync/harness';
import {
  compareTranslationRanks,
  FINAL_STAGE,
  outcomeName,
  replacesStored,
  storedTranslationRank,
  translatedMessage,
  translationRank,
  type TranslationRank,
} from './publish.js';

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

const version = fc.record({
  offsetsPartition: fc.integer({ min: 0, max: 2 }),
  offsetsOffset: fc.integer({ min: 0, max: 6 }),
});
const outcome = fc.constantFrom(
  TranslationOutcome.TRANSLATION_OUTCOME_EXACT,
  TranslationOutcome.TRANSLATION_OUTCOME_INEXACT,
  TranslationOutcome.TRANSLATION_OUTCOME_PENDING,
  TranslationOutcome.TRANSLATION_OUTCOME_REFUSED,
);
/** A translation of one key as far as ordering goes, with the offsets it would commit. */
const translation = fc.record({
  version,
  outcome,
  attempts: fc.integer({ min: 1, max: 4 }),
  sourceOffset: fc.integer({ min: 0, max: 1_000 }),
  revision: fc.constantFrom(0, 0, 1, 2),
});
const rankOf = (t: { version: Version; outcome: TranslationOutcome; attempts: number; revision?: number }) =>
  translationRank(t.version, t.outcome, t.attempts, t.revision);

/** The stream message of a translation of g/orders/0 on link src -> dst, as the translator publishes it. */
function published(t: {
  version: Version;
  outcome: TranslationOutcome;
  attempts: number;
  sourceOffset: number;
  revision?: number;
}) {
  return translatedMessage(
    new Names('t'),
    {
      link: { source: 'src', target: 'dst' },
      event: OffsetCommitted.fromPartial({
        sourceCluster: 'src',
        group: 'g',
        topic: 'orders',
        partition: 0,
        committedOffset: t.sourceOffset,
        version: t.version,
      }),
      translation: {
        outcome: t.outcome,
        targetOffset: t.outcome === TranslationOutcome.TRANSLATION_OUTCOME_PENDING ? -1 : t.sourceOffset + 7,
        detail: '',
        method: TranslationMethod.TRANSLATION_METHOD_NONE,
        refusalReason: RefusalReason.REFUSAL_REASON_UNSPECIFIED,
      },
      attempts: t.attempts,
      translatedAtMs: 1,
      ...(t.revision === undefined ? {} : { revision: t.revision }),
    },
    ROOT_CONTEXT,
  );
}

/** The message as a read of the stream gives it back: payload and headers by lower-case name. */
function readBack(message: ReturnType<typeof published>) {
  const headers = new Map<string, string>();
  for (const k of message.headers?.keys() ?? []) headers.set(k.toLowerCase(), message.headers!.get(k));
  return { data: message.payload, headers };
}

describe('the order of the translations of one key', () => {
  const v = (offsetsOffset: number, offsetsPartition = 0): Version => ({ offsetsPartition, offsetsOffset });
  const exact = TranslationOutcome.TRANSLATION_OUTCOME_EXACT;
  const pending = TranslationOutcome.TRANSLATION_OUTCOME_PENDING;

  it('keeps a newer version, also one that rewinds to a lower offset', () => {
    const older = published({ version: v(10), outcome: exact, attempts: 1, sourceOffset: 500 });
    const rewind = published({ version: v(11), outcome: exact, attempts: 1, sourceOffset: 3 });
    expect(replacesStored(rewind.rank, older.rank)).toBe(true);
    expect(replacesStored(older.rank, rewind.rank)).toBe(false);
  });

  it('puts a final translation after the pending attempts of its version, and those in attempt order', () => {
    const final = translationRank(v(5), exact, 1);
    expect(final.stage).toBe(FINAL_STAGE);
    expect(replacesStored(final, translationRank(v(5), pending, 9))).toBe(true);
    expect(replacesStored(translationRank(v(5), pending, 9), final)).toBe(false);
    expect(replacesStored(translationRank(v(5), pending, 3), translationRank(v(5), pending, 2))).toBe(true);
    expect(replacesStored(translationRank(v(5), pending, 2), translationRank(v(5), pending, 3))).toBe(false);
    // Any attempt of a newer version is newer than the final translation of an older one.
    expect(replacesStored(translationRank(v(6), pending, 1), final)).toBe(true);
  });

  it('puts a revision after the final translation it revises, with a message id of its own, and a newer version after both', () => {
    const first = published({ version: v(5), outcome: exact, attempts: 1, sourceOffset: 40 });
    const revised = published({ version: v(5), outcome: exact, attempts: 1, sourceOffset: 41, revision: 1 });
    expect(first.msgId).toBe('src:dst:0:5:final');
    expect(revised.msgId).toBe('src:dst:0:5:revised-1');
    expect(replacesStored(revised.rank, first.rank)).toBe(true);
    expect(replacesStored(first.rank, revised.rank)).toBe(false);
    expect(replacesStored(translationRank(v(6), pending, 1), revised.rank)).toBe(true);
    expect(storedTranslationRank(readBack(revised))).toEqual(revised.rank);
  });

  it('lets a repeat of the stored translation through (JetStream drops it by its message id)', () => {
    const t = { version: v(5), outcome: exact, attempts: 2, sourceOffset: 40 };
    expect(replacesStored(published(t).rank, published(t).rank)).toBe(true);
    expect(published(t).msgId).toBe(published({ ...t, attempts: 3 }).msgId);
  });

  it('is a total order that puts versions first, as compareVersions does', () => {
    fc.assert(
      fc.property(translation, translation, translation, (a, b, c) => {
        const [ra, rb, rc] = [rankOf(a), rankOf(b), rankOf(c)];
        expect(Math.sign(compareTranslationRanks(ra, rb)) + Math.sign(compareTranslationRanks(rb, ra))).toBe(
          0,
        );
        expect(compareTranslationRanks(ra, ra)).toBe(0);
        if (compareTranslationRanks(ra, rb) <= 0 && compareTranslationRanks(rb, rc) <= 0)
          expect(compareTranslationRanks(ra, rc)).toBeLessThanOrEqual(0);
        const byVersion = compareVersions(a.version, b.version);
        if (byVersion !== 0) expect(Math.sign(compareTranslationRanks(ra, rb))).toBe(Math.sign(byVersion));
      }),
    );
  });

  it('leaves the stream on the newest translation, never going back, whatever the arrival order', () => {
    fc.assert(
      fc.property(fc.array(translation, { minLength: 1, maxLength: 30 }), (arrivals) => {
        let stored: TranslationRank | undefined;
        const held: TranslationRank[] = [];
        for (const t of arrivals) {
          const rank = published(t).rank;
          if (stored === undefined || replacesStored(rank, stored)) {
            stored = rank;
            held.push(rank);
          }
        }
        for (let i = 1; i < held.length; i++)
          expect(compareTranslationRanks(held[i]!, held[i - 1]!)).toBeGreaterThanOrEqual(0);
        const newest = arrivals.map(rankOf).reduce((a, b) => (compareTranslationRanks(a, b) >= 0 ? a : b));
        expect(compareTranslationRanks(stored!, newest)).toBe(0);
        // In particular the stream ends on the newest version, whatever its offset.
        const newestVersion = arrivals
          .map((t) => t.version)
          .reduce((a, b) => (compareVersions(a, b) >= 0 ? a : b));
        expect(stored!.version).toEqual(newestVersion);
      }),
    );
  });

  it('reads back from a stored message the rank the translation was published with', () => {
    fc.assert(
      fc.property(translation, (t) => {
        const message = published(t);
        expect(storedTranslationRank(readBack(message))).toEqual(message.rank);
      }),
    );
  });

  it('ranks a stored message that is not a readable OffsetTranslated below every translation', () => {
    const anything = published({ version: v(0), outcome: pending, attempts: 1, sourceOffset: 0 }).rank;
    const garbage = { data: new Uint8Array([0xff, 0xff, 0xff]), headers: new Map<string, string>() };
    const otherType = {
      data: new Uint8Array(),
      headers: new Map([['offsetsync-event', 'OffsetApplied']]),
    };
    const noVersion = {
      data: OffsetTranslated.encode(OffsetTranslated.fromPartial({})).finish(),
      headers: new Map(),
    };
    for (const stored of [garbage, otherType, noVersion])
      expect(replacesStored(anything, storedTranslationRank(stored))).toBe(true);
  });
});
