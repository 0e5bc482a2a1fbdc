// The last steps of the commit pipeline: the OffsetApplied event of every translation that has a report
// (built purely from the translation and its report), published through the event envelope, and then the
// settlement of the inputs. A message is acknowledged only after JetStream acknowledged its report
// (at-least-once); one handed back is delivered again after a backoff.
import { context, trace, type Context } from '@opentelemetry/api';
import {
  appliedMessageId,
  ApplyOutcome,
  encodeEvent,
  OffsetApplied,
  SkipReason,
  TranslationOutcome,
  type Names,
  type OffsetTranslated,
  type Version,
} from '@offsetsync/contracts';
import type { StreamMessage } from '@offsetsync/jetstream';
import { doublingBackoffMs, failSpan, type BackoffSettings } from '@offsetsync/runtime';
import type { OutcomeCounters } from '../outcome-counters.js';
import type { AppliedOutcomeName, AppliedReport, Link, WorkItem } from './work-item.js';

const SKIP_REASONS: Record<Exclude<AppliedOutcomeName, 'APPLIED' | 'OBSERVED'>, SkipReason> = {
  STALE_VERSION: SkipReason.SKIP_REASON_STALE_VERSION,
  ACTIVE_ON_TARGET: SkipReason.SKIP_REASON_ACTIVE_ON_TARGET,
  TARGET_AHEAD: SkipReason.SKIP_REASON_TARGET_AHEAD,
  COMMIT_FAILED: SkipReason.SKIP_REASON_COMMIT_FAILED,
  OUT_OF_LOG_BOUNDS: SkipReason.SKIP_REASON_OUT_OF_LOG_BOUNDS,
};

/** The event's outcome and skip reason for a report's outcome. Pure. */
function outcomeOf(name: AppliedOutcomeName): { outcome: ApplyOutcome; skipReason: SkipReason } {
  const none = SkipReason.SKIP_REASON_UNSPECIFIED;
  if (name === 'APPLIED') return { outcome: ApplyOutcome.APPLY_OUTCOME_APPLIED, skipReason: none };
  if (name === 'OBSERVED') return { outcome: ApplyOutcome.APPLY_OUTCOME_OBSERVED, skipReason: none };
  return { outcome: ApplyOutcome.APPLY_OUTCOME_SKIPPED, skipReason: SKIP_REASONS[name] };
}

/** The OffsetApplied event reporting what became of `translation`. Pure. */
function appliedEvent(translation: OffsetTranslated, report: AppliedReport): OffsetApplied {
  const { outcome, skipReason } = outcomeOf(report.outcome);
  return OffsetApplied.fromPartial({
    sourceCluster: translation.sourceCluster,
    targetCluster: translation.targetCluster,
    group: translation.group,
    topic: translation.topic,
    partition: translation.partition,
    sourceOffset: translation.sourceOffset,
    targetOffset: outcome === ApplyOutcome.APPLY_OUTCOME_SKIPPED ? -1 : report.targetOffset,
    exact: translation.outcome === TranslationOutcome.TRANSLATION_OUTCOME_EXACT,
    outcome,
    skipReason,
    detail: report.detail,
    version: translation.version,
    sourceCommitTimestampMs: translation.sourceCommitTimestampMs,
    appliedAtMs: report.appliedAtMs,
    targetTopic: translation.targetTopic,
  });
}

/** The subject of the OffsetApplied events of the translation's key. Pure. */
function appliedSubject(names: Names, translation: OffsetTranslated): string {
  return names.applied(translation.sourceCluster, translation.targetCluster, {
    group: translation.group,
    topic: translation.topic,
    partition: translation.partition,
  });
}

/** What {@link appliedMessage} needs of one translation and its report. */
export interface ReportedTranslation {
  translation: OffsetTranslated;
  version: Version;
  report: AppliedReport;
}

/**
 * The stream message of one report, through the event envelope: the OffsetApplied event on its key's
 * subject, the message id of link, version, outcome and revision (the same outcome decided again after a
 * redelivery or by another instance is stored once), continuing the trace of `traceContext`. Pure.
 */
export function appliedMessage(
  names: Names,
  link: Link,
  reportedTranslation: ReportedTranslation,
  traceContext: Context,
): StreamMessage {
  const { translation, version, report } = reportedTranslation;
  const msgId = appliedMessageId(link.source, link.target, version, report.outcome, translation.revision);
  const encoded = encodeEvent(
    { type: 'OffsetApplied', event: appliedEvent(translation, report) },
    { subject: appliedSubject(names, translation), msgId, trace: traceContext },
  );
  return { subject: encoded.subject, payload: encoded.payload, headers: encoded.headers, msgId };
}

/** What the reports step needs. */
export interface ReportsOptions {
  names: Names;
  link: Link;
  /** Publishes events and resolves once JetStream acknowledged all of them (publishAll). */
  publish: (messages: StreamMessage[]) => Promise<unknown>;
  counters: OutcomeCounters;
  /** Delay before a transiently failed event is delivered again. */
  backoff: BackoffSettings;
  /** Told of every translation settled, with its version. */
  onHandled: (version: Version) => void;
}

/** Publishes the reports of a batch's translations and settles their messages. */
export class Reports {
  constructor(private readonly options: ReportsOptions) {}

  /** Publishes the OffsetApplied event of every item that has a report, in item order. */
  async publish(items: readonly WorkItem[]): Promise<void> {
    const messages: StreamMessage[] = [];
    for (const item of items) {
      if (item.fate?.kind !== 'report') continue;
      messages.push(
        appliedMessage(
          this.options.names,
          this.options.link,
          { translation: item.translation, version: item.version, report: item.fate.report },
          trace.setSpan(context.active(), item.span),
        ),
      );
    }
    if (messages.length > 0) await this.options.publish(messages);
  }

  /**
   * Settles items whose reports are stored: acknowledged when reported, handed back with a delay when
   * to be retried. Throws for an item without a fate (a bug in an earlier step).
   */
  settle(items: readonly WorkItem[]): void {
    for (const item of items) {
      const fate = item.fate;
      if (fate === undefined) throw new Error(`no outcome for ${item.key}`);
      if (fate.kind === 'report') {
        item.message.ack();
        item.span.setAttribute('offsetsync.outcome', fate.counted);
        if (fate.report.detail !== '') item.span.setAttribute('offsetsync.detail', fate.report.detail);
        this.options.counters.add(fate.counted);
      } else {
        item.message.nak(doublingBackoffMs(item.message.info.redeliveryCount, this.options.backoff));
        item.span.setAttribute('offsetsync.outcome', 'retried');
        failSpan(item.span, fate.error);
        this.options.counters.add('retried');
      }
      this.options.onHandled(item.version);
    }
  }
}
