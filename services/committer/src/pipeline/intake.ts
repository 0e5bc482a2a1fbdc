// The first step of the commit pipeline: every message is decoded through the event envelope and
// checked; one with nothing to commit is settled at once (not translated: acknowledged; unusable:
// terminated, since redelivering it would never help), and of the rest only the newest translation per
// key goes on, the older ones being reported as stale.
//
// A translation is refused (terminated, counted, logged and filed as a problem, never committed) when its
// body names another link than the pipeline's, or another key than its subject: the durable consumer's
// filter only vouches for the subject, and whoever may publish on a link's subjects must not be able to
// move another link's groups, nor another key's group through a key's subject. No OffsetApplied event is
// published for it: the subject it would go on belongs to a link (or key) the event has no say over,
// and the committer's NATS user may publish only on its own links' subjects.
import type { Context, Span, Tracer } from '@opentelemetry/api';
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
import { committerDurable } from '@offsetsync/jetstream';
import { failSpan, messagingSpan, TOPIC_NAME_PATTERN, type Logger } from '@offsetsync/runtime';
import type { CommitterOutcome, OutcomeCounters } from '../outcome-counters.js';
import type { RefusalKind, Refusals } from '../refusals.js';
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
  /** Not a usable OffsetTranslated; `translation` when it decoded but failed the check. */
  | { kind: 'malformed'; error: OffsetSyncError; trace: Context; translation?: OffsetTranslated }
  /**
   * A readable OffsetTranslated the pipeline must not apply: its body names another link than the
   * pipeline's (`foreign_link`) or another key than its subject (`subject_mismatch`). `disagreement`
   * says what differs, for the log.
   */
  | {
      kind: 'refused';
      refusal: Extract<RefusalKind, 'foreign_link' | 'subject_mismatch'>;
      error: OffsetSyncError;
      trace: Context;
      translation: OffsetTranslated;
      disagreement: Record<string, unknown>;
    };

/** The name of a translation outcome for logs and details, never its number. */
export function translationOutcomeName(outcome: TranslationOutcome): string {
  return (TranslationOutcome as Record<number, string | undefined>)[outcome] ?? `unrecognized (${outcome})`;
}

/**
 * Why a decoded translation cannot be handled by a committer, as a typed error (DECODE_ERROR;
 * UNKNOWN_RECORD for an outcome this build does not know); undefined when it can. Pure.
 */
function translationProblem(t: OffsetTranslated): OffsetSyncError | undefined {
  const problem = (message: string, code: 'DECODE_ERROR' | 'UNKNOWN_RECORD' = ErrorCodes.DECODE_ERROR) =>
    new OffsetSyncError(message, { code });
  if (t.version === undefined) return problem('no version');
  if (t.topic === '' || !Number.isInteger(t.partition) || t.partition < 0)
    return problem('no topic partition');
  if (t.targetTopic !== '' && !TOPIC_NAME_PATTERN.test(t.targetTopic))
    return problem(`target topic ${JSON.stringify(t.targetTopic.slice(0, 300))} is not a Kafka topic name`);
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

/** The parts of a translated subject, in the order Names lays them out. */
const SUBJECT_PARTS = ['prefix', 'stream', 'source', 'target', 'group', 'topic', 'partition'] as const;

/**
 * The parts of `subject` that differ from `expected` (both translated subjects; tokens never hold a
 * dot), or `layout` when they do not have the same number of tokens. Pure.
 */
export function subjectDisagreement(subject: string, expected: string): string[] {
  const got = subject.split('.');
  const want = expected.split('.');
  if (got.length !== want.length) return ['layout'];
  return want.flatMap((token, i) => (got[i] === token ? [] : [SUBJECT_PARTS[i] ?? `token ${i}`]));
}

/** Why a readable translation is refused, and what disagreed (see ReadTranslation). */
export type Refusal = Omit<Extract<ReadTranslation, { kind: 'refused' }>, 'kind' | 'trace' | 'translation'>;

/**
 * The refusal of a translation that arrived on `subject` (a subject of `link`, which the consumer's filter
 * vouches for) and whose body names another link; undefined when the body names `link`. Pure.
 */
export function foreignLinkRefusal(
  t: OffsetTranslated,
  subject: string,
  link: Pick<Link, 'source' | 'target'>,
): Refusal | undefined {
  if (t.sourceCluster === link.source && t.targetCluster === link.target) return undefined;
  const disagreement = {
    subject,
    bodyLink: `${t.sourceCluster} -> ${t.targetCluster}`,
    servedLink: `${link.source} -> ${link.target}`,
  };
  return {
    refusal: 'foreign_link',
    error: new OffsetSyncError(
      `refused a translated event on ${subject}: its body names link ${disagreement.bodyLink}, the subject's link is ${disagreement.servedLink}`,
      { code: ErrorCodes.EVENT_REFUSED, details: { ...disagreement, resource: `SUBJECT:${subject}` } },
    ),
    disagreement,
  };
}

/**
 * The refusal of a translation of `link` (with a valid topic partition) that arrived on `subject` when
 * that is not the subject of the key its body names, as Names encodes it; undefined when it is. Pure.
 */
export function subjectRefusal(
  t: OffsetTranslated,
  subject: string,
  link: Link,
  names: Names,
): Refusal | undefined {
  const expectedSubject = names.translated(link.source, link.target, t);
  if (expectedSubject === subject) return undefined;
  const differs = subjectDisagreement(subject, expectedSubject);
  const disagreement = { subject, expectedSubject, differs };
  return {
    refusal: 'subject_mismatch',
    error: new OffsetSyncError(
      `refused a translated event on ${subject}: its body names group ${t.group} ${t.topic}-${t.partition}, whose subject is ${expectedSubject} (${differs.join(', ')} differ)`,
      { code: ErrorCodes.EVENT_REFUSED, details: { ...disagreement, resource: `SUBJECT:${subject}` } },
    ),
    disagreement,
  };
}

/**
 * Reads one message of the translated stream that arrived on `subject` for the pipeline of `link`. A
 * message without a type header is taken as an OffsetTranslated (what translators wrote before the
 * header existed). Pure.
 */
export function readTranslation(
  message: ReceivedMessage & { readonly subject: string },
  link: Link,
  names: Names,
): ReadTranslation {
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
  // The link first: an event of another link is refused whatever else is wrong with it.
  const foreign = foreignLinkRefusal(translation, message.subject, link);
  if (foreign !== undefined) return { kind: 'refused', ...foreign, trace: decoded.trace, translation };
  const error = translationProblem(translation);
  if (error !== undefined) return { kind: 'malformed', error, trace: decoded.trace, translation };
  const misplaced = subjectRefusal(translation, message.subject, link, names);
  if (misplaced !== undefined) return { kind: 'refused', ...misplaced, trace: decoded.trace, translation };
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
  /** Where refused translations are logged and filed. */
  refusals: Refusals;
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
      const read = readTranslation(message, this.options.link, this.options.names);
      const span = this.startSpan(message, read);
      switch (read.kind) {
        case 'malformed':
          unusable = read.error;
          this.finishEarly(span, message, 'malformed', read.error);
          break;
        case 'refused':
          // Neither readable nor unusable: it leaves the `read translations` problem as it is.
          this.refuse(span, message, read);
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

  private startSpan(message: InboundMessage, read: ReadTranslation): Span {
    const { link, names } = this.options;
    const translation = read.translation;
    const { name, options } = messagingSpan({
      operation: 'process',
      stage: 'commit',
      subject: message.subject,
      subjectTemplate: names.translatedFilter(link.source, link.target),
      consumer: committerDurable(link.source, link.target, link.mode),
      attributes: {
        'offsetsync.source': link.source,
        'offsetsync.target': link.target,
        ...(translation === undefined
          ? {}
          : {
              'offsetsync.group': translation.group,
              'offsetsync.topic': translation.topic,
              'offsetsync.partition': translation.partition,
              'offsetsync.version': formatVersion(translation.version),
            }),
      },
    });
    return this.options.tracer.startSpan(name, options, read.trace);
  }

  /**
   * Terminates a refused translation (never redelivered: it would be refused again), counts it, and
   * logs and files it through the refusals. Its version is not the pipeline's progress.
   */
  private refuse(
    span: Span,
    message: InboundMessage,
    read: Extract<ReadTranslation, { kind: 'refused' }>,
  ): void {
    const outcome: CommitterOutcome =
      read.refusal === 'foreign_link' ? 'refused_foreign_link' : 'refused_subject_mismatch';
    span.setAttribute('offsetsync.outcome', outcome);
    failSpan(span, read.error);
    // No reason: nats-server 2.9 takes only a bare +TERM; one with a reason (2.10+) is ignored, and the
    // message would be redelivered after every ack wait. The log and the span carry the reason.
    message.term();
    span.end();
    this.options.counters.add(outcome);
    const t = read.translation;
    this.options.refusals.refused(read.refusal, read.error, {
      ...read.disagreement,
      group: t.group,
      topic: t.topic,
      partition: t.partition,
      version: formatVersion(t.version),
      targetOffset: t.targetOffset,
    });
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
      failSpan(span, problem);
      // Without a reason, which nats-server 2.9 would ignore (see refuse).
      message.term();
    }
    span.end();
    this.options.counters.add(outcome);
  }
}
