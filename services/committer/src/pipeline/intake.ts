// The first step of the commit pipeline: every message is decoded through the event envelope and
// checked; one with nothing to commit is settled at once (not translated: acknowledged; unusable:
// terminated, since redelivering it would never help), and of the rest only the newest translation per
// key goes on, the older ones being reported as stale.
import { SpanKind, SpanStatusCode, type Context, type Span, type Tracer } from '@opentelemetry/api';
import {
  decodeEvent,
  ErrorCodes,
  extractTraceContext,
  formatVersion,
  OffsetSyncError,
  TranslationOutcome,
  type Names,
  type OffsetTranslated,
  type ReceivedMessage,
  type Version,
} from '@offsetsync/contracts';
import type { Logger } from '@offsetsync/runtime';
import type { CommitterOutcome, OutcomeCounters } from '../outcome-counters.js';
import { byGroup, coalesceByKey } from '../translation-coalescer.js';
import {
  PipelineAreas,
  reported,
  type InboundMessage,
  type Link,
  type ProblemReporter,
  type WorkItem,
} from './work-item.js';

/** What one message is to the committer. */
export type ReadTranslation =
  /** A translation with a target offset to commit. */
  | { kind: 'commit'; translation: OffsetTranslated; trace: Context }
  /** A translation without a target offset (pending or refused): counted, nothing to commit. */
  | {
      kind: 'not-translated';
      translation: OffsetTranslated;
      trace: Context;
      outcome: Extract<CommitterOutcome, 'not_translated_pending' | 'not_translated_refused'>;
    }
  /** Not a usable OffsetTranslated of this link; `translation` when it decoded but failed the check. */
  | { kind: 'malformed'; error: OffsetSyncError; trace: Context; translation?: OffsetTranslated };

/** The name of a translation outcome for logs and details, never its number. */
export function translationOutcomeName(outcome: TranslationOutcome): string {
  return (TranslationOutcome as Record<number, string | undefined>)[outcome] ?? `unrecognized (${outcome})`;
}

/**
 * Why a decoded translation cannot be handled by the committer of `link`, as a typed error
 * (DECODE_ERROR; UNKNOWN_RECORD for an outcome this build does not know); undefined when it can. Pure.
 */
function translationProblem(t: OffsetTranslated, link: Link): OffsetSyncError | undefined {
  const problem = (message: string, code: 'DECODE_ERROR' | 'UNKNOWN_RECORD' = ErrorCodes.DECODE_ERROR) =>
    new OffsetSyncError(message, { code });
  if (t.sourceCluster !== link.source || t.targetCluster !== link.target) {
    return problem(`link ${t.sourceCluster} -> ${t.targetCluster} is not ${link.source} -> ${link.target}`);
  }
  if (t.version === undefined) return problem('no version');
  if (t.topic === '' || !Number.isInteger(t.partition) || t.partition < 0)
    return problem('no topic partition');
  switch (t.outcome) {
    case TranslationOutcome.TRANSLATION_OUTCOME_EXACT:
    case TranslationOutcome.TRANSLATION_OUTCOME_INEXACT:
      return t.targetOffset >= 0 ? undefined : problem(`target offset ${t.targetOffset}`);
    case TranslationOutcome.TRANSLATION_OUTCOME_PENDING:
    case TranslationOutcome.TRANSLATION_OUTCOME_REFUSED:
      return undefined;
    default:
      return problem(`translation outcome ${translationOutcomeName(t.outcome)}`, ErrorCodes.UNKNOWN_RECORD);
  }
}

/**
 * Reads one message of the translated stream. A message without a type header is taken as an
 * OffsetTranslated (what translators wrote before the header existed). Pure.
 */
export function readTranslation(message: ReceivedMessage, link: Link): ReadTranslation {
  const decoded = decodeEvent(message, { accept: ['OffsetTranslated'], typeWhenMissing: 'OffsetTranslated' });
  if (!decoded.ok) {
    return {
      kind: 'malformed',
      error: new OffsetSyncError(decoded.detail, {
        code: decoded.reason === 'UNKNOWN_TYPE' ? ErrorCodes.UNKNOWN_RECORD : ErrorCodes.DECODE_ERROR,
        details: { eventType: decoded.type },
      }),
      // The envelope gives no trace for a message it cannot read; its span still belongs to its trace.
      trace: extractTraceContext(message.headers),
    };
  }
  const translation = decoded.event;
  const error = translationProblem(translation, link);
  if (error !== undefined) return { kind: 'malformed', error, trace: decoded.trace, translation };
  switch (translation.outcome) {
    case TranslationOutcome.TRANSLATION_OUTCOME_PENDING:
      return { kind: 'not-translated', translation, trace: decoded.trace, outcome: 'not_translated_pending' };
    case TranslationOutcome.TRANSLATION_OUTCOME_REFUSED:
      return { kind: 'not-translated', translation, trace: decoded.trace, outcome: 'not_translated_refused' };
    default:
      return { kind: 'commit', translation, trace: decoded.trace };
  }
}

/** The newest translation of each key, by group, and the superseded ones (already reported stale). */
export interface CoalescedBatch {
  /** The newest translation of each key, grouped by consumer group. */
  newestByGroup: Map<string, WorkItem[]>;
  /** The superseded translations of each group, each with its STALE_VERSION fate set. */
  supersededByGroup: Map<string, WorkItem[]>;
}

/**
 * Keeps the newest translation per key; the others get the fate STALE_VERSION, decided at
 * `decidedAtMs`, naming the version that superseded them.
 */
export function coalesceBatch(items: readonly WorkItem[], decidedAtMs: number): CoalescedBatch {
  const { newest, superseded } = coalesceByKey(items);
  for (const { item, by } of superseded) {
    item.fate = reported(
      'STALE_VERSION',
      -1,
      `superseded by version ${formatVersion(by.version)} in the same batch`,
      decidedAtMs,
    );
  }
  return { newestByGroup: byGroup(newest), supersededByGroup: byGroup(superseded.map(({ item }) => item)) };
}

/** What the intake step needs. */
export interface IntakeOptions {
  names: Names;
  link: Link;
  tracer: Tracer;
  logger: Logger;
  counters: OutcomeCounters;
  problems?: ProblemReporter | undefined;
  /** Told of every translation settled here, with its version when it has one. */
  onHandled: (version: Version | undefined) => void;
}

/** Decodes and checks a batch's messages, settling at once those with nothing to commit. */
export class Intake {
  constructor(private readonly options: IntakeOptions) {}

  /**
   * The batch's translations with a target offset to commit, each with its span started; every other
   * message is settled and counted. A batch with an unusable message files it under
   * `read translations`; a batch of readable ones clears that.
   */
  accept(messages: readonly InboundMessage[]): WorkItem[] {
    const items: WorkItem[] = [];
    let unusable: OffsetSyncError | undefined;
    let readable = false;
    for (const message of messages) {
      const read = readTranslation(message, this.options.link);
      const span = this.startSpan(read);
      switch (read.kind) {
        case 'malformed':
          unusable = read.error;
          this.finishEarly(span, message, 'malformed', read.error);
          break;
        case 'not-translated':
          readable = true;
          this.finishEarly(span, message, read.outcome);
          this.options.onHandled(read.translation.version);
          break;
        case 'commit': {
          readable = true;
          const { translation } = read;
          items.push({
            message,
            span,
            translation,
            version: translation.version!,
            group: translation.group,
            key: this.options.names.linkKey(this.options.link.source, this.options.link.target, translation),
          });
          break;
        }
      }
    }
    if (unusable !== undefined) this.options.problems?.fail(PipelineAreas.readTranslations, unusable);
    else if (readable) this.options.problems?.recover(PipelineAreas.readTranslations);
    return items;
  }

  private startSpan(read: ReadTranslation): Span {
    const span = this.options.tracer.startSpan(
      'offsetsync.commit',
      {
        kind: SpanKind.CONSUMER,
        attributes: {
          'offsetsync.source': this.options.link.source,
          'offsetsync.target': this.options.link.target,
        },
      },
      read.trace,
    );
    const translation = read.translation;
    if (translation !== undefined) {
      span.setAttributes({
        'offsetsync.group': translation.group,
        'offsetsync.topic': translation.topic,
        'offsetsync.partition': translation.partition,
        'offsetsync.version': formatVersion(translation.version),
      });
    }
    return span;
  }

  private finishEarly(
    span: Span,
    message: InboundMessage,
    outcome: CommitterOutcome,
    problem?: OffsetSyncError,
  ): void {
    span.setAttribute('offsetsync.outcome', outcome);
    if (problem === undefined) {
      message.ack();
    } else {
      // Redelivering a message that cannot be read would never help.
      this.options.logger.warn(
        { code: problem.code, problem: problem.message },
        'terminating an unusable translated event',
      );
      span.setStatus({ code: SpanStatusCode.ERROR, message: problem.message });
      message.term(problem.message);
    }
    span.end();
    this.options.counters.add(outcome);
  }
}
