// Rolling upgrades keep deduplicating only if the new build reads what the old one wrote and writes the
// same bytes, subjects and message ids for the same event. The fixtures were made by the build before the
// restructure of issue 13 (packages/harness/fixtures/wire-golden.json says which); every one must decode with today's
// contracts and encode again byte-identical.
import { describe, expect, it } from 'vitest';
import {
  appliedMessageId,
  committedMessageId,
  decodeEvent,
  encodeEvent,
  formatCommitMetadata,
  Names,
  parseCommitMetadata,
  SkipReason,
  TranslationOutcome,
  translatedMessageId,
  type EventType,
  type OffsetSyncEvent,
} from '@offsetsync/contracts';
import { goldenCommitMarks, goldenEvents, goldenMessage } from '@offsetsync/harness';

const ALL_TYPES: EventType[] = [
  'OffsetCommitted',
  'OffsetDeleted',
  'OffsetTranslated',
  'OffsetApplied',
  'Heartbeat',
];
const names = new Names('offsetsync');

const APPLIED_OUTCOMES: Record<number, string> = {
  [SkipReason.SKIP_REASON_STALE_VERSION]: 'STALE_VERSION',
  [SkipReason.SKIP_REASON_ACTIVE_ON_TARGET]: 'ACTIVE_ON_TARGET',
  [SkipReason.SKIP_REASON_TARGET_AHEAD]: 'TARGET_AHEAD',
  [SkipReason.SKIP_REASON_COMMIT_FAILED]: 'COMMIT_FAILED',
};

/** Subject and message id as today's code derives them from the event alone. */
function addressOf(e: OffsetSyncEvent): { subject: string; msgId: string | null } {
  switch (e.type) {
    case 'OffsetCommitted':
      return {
        subject: names.committed(e.event.sourceCluster, e.event),
        msgId: committedMessageId(e.event.sourceCluster, e.event.version!),
      };
    case 'OffsetDeleted':
      return {
        subject:
          e.event.partition < 0
            ? names.committedGroup(e.event.sourceCluster, e.event.group)
            : names.committed(e.event.sourceCluster, e.event),
        msgId: committedMessageId(e.event.sourceCluster, e.event.version!),
      };
    case 'OffsetTranslated': {
      const pending = e.event.outcome === TranslationOutcome.TRANSLATION_OUTCOME_PENDING;
      return {
        subject: names.translated(e.event.sourceCluster, e.event.targetCluster, e.event),
        msgId: translatedMessageId(
          e.event.sourceCluster,
          e.event.targetCluster,
          e.event.version,
          pending
            ? { final: false, attempts: e.event.attempts }
            : { final: true, revision: e.event.revision },
        ),
      };
    }
    case 'OffsetApplied':
      return {
        subject: names.applied(e.event.sourceCluster, e.event.targetCluster, e.event),
        msgId: appliedMessageId(
          e.event.sourceCluster,
          e.event.targetCluster,
          e.event.version!,
          APPLIED_OUTCOMES[e.event.skipReason] ?? 'APPLIED',
        ),
      };
    case 'Heartbeat':
      return { subject: names.heartbeat(e.event.role, e.event.instanceId), msgId: null };
  }
}

describe('wire compatibility with the build before the restructure', () => {
  it('has a fixture of every event type', () => {
    expect(new Set(goldenEvents().map((f) => f.type))).toEqual(new Set(ALL_TYPES));
  });

  it.each(goldenEvents().map((f, i) => [`${i} ${f.type} ${f.msgId ?? f.subject}`, f] as const))(
    '%s decodes and encodes again byte-identical, with the same subject, message id and headers',
    (_, fixture) => {
      const decoded = decodeEvent(goldenMessage(fixture), { accept: ALL_TYPES });
      if (!decoded.ok) throw new Error(decoded.detail);
      expect(decoded.type).toBe(fixture.type);
      expect(addressOf(decoded)).toEqual({ subject: fixture.subject, msgId: fixture.msgId });

      const traced = 'traceparent' in fixture.headers;
      const encoded = encodeEvent(decoded, {
        subject: fixture.subject,
        ...(fixture.msgId === null ? {} : { msgId: fixture.msgId }),
        ...(traced ? { trace: decoded.trace } : {}),
      });
      expect(Buffer.from(encoded.payload).toString('base64')).toBe(fixture.payload);
      const written: Record<string, string> = {};
      for (const k of encoded.headers.keys()) written[k] = encoded.headers.get(k);
      expect(written).toEqual(fixture.headers);
    },
  );

  it.each(goldenCommitMarks().map((m) => [m.metadata, m] as const))(
    'commit mark %s reads and writes the same',
    (_, m) => {
      expect(parseCommitMetadata(m.metadata)).toEqual({ mark: m.mark, originalMetadata: m.original });
      expect(formatCommitMetadata(m.mark, m.original)).toBe(m.metadata);
    },
  );
});
