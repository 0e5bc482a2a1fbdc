// What the translator does with one batch of OffsetCommitted events of one link (source -> target), step
// by step (pipeline/):
//   intake:          the newest message per key (the older ones are done), read through the envelope;
//   decide without target: refusals that need no look at the target (translation-plan.ts);
//   locate:          the anchors' counterparts on the target, many at a time;
//   build:           the translation of each located commit, and the position it teaches;
//   publish:         one OffsetTranslated event per translation, through the envelope, unless the key's
//                    translation in the stream is newer (instances sharing the consumer finish in any order);
//   schedule pending: acknowledge what is done, hand pending ones back with a growing delay;
//   revise:          translations made before the target held the whole duplicate window after them are
//                    watched, and made again when the target grew: a later offset is published as the
//                    next revision of the same version (pipeline/revisions.ts).
// A source commit is acknowledged only after JetStream acknowledged its translation; a crash leads to a
// redelivery, and the message ids make the repeat harmless.
import { context, trace, type Attributes, type Context, type Span, type Tracer } from '@opentelemetry/api';
import type { MsgHdrs } from 'nats';
import {
  formatVersion,
  TranslationOutcome,
  type Names,
  type OffsetCommitted,
  type OffsetSyncError,
} from '@offsetsync/contracts';
import { translatorDurable, type NewestOutcome, type RankedMessage } from '@offsetsync/jetstream';
import { toOffsetSyncError } from '@offsetsync/kafka';
import {
  failSpan,
  linkFilter,
  messagingSpan,
  type LinkFilter,
  type Logger,
  type ProblemBoard,
  type SyncStage,
  targetTopic,
  type TargetTopic,
  type TopicNames,
} from '@offsetsync/runtime';
import type { PositionMemory } from './position-memory.js';
import { buildTranslation } from './pipeline/build-translations.js';
import { newestPerSubject, readCommit } from './pipeline/intake.js';
import { partitionKey } from './anchor-locator.js';
import { locateAnchors, readFailures, type AnchorLocations, type Locator } from './pipeline/locate.js';
import {
  FINAL_STAGE,
  outcomeName,
  translatedMessage,
  translationAddress,
  type Link,
  type PublishedTranslation,
  type TranslationRank,
} from './pipeline/publish.js';
import {
  isForwardRevision,
  RevisionWatch,
  type RevisionLimits,
  type WatchedTranslation,
} from './pipeline/revisions.js';
import { PendingTranslations, settlementOf, type PendingRetry } from './pipeline/schedule-pending.js';
import { decideWithoutTarget, type Translation } from './translation-plan.js';

/** The parts of a JetStream message the pipeline uses (JsMsg has them). */
export interface CommittedMessage {
  readonly subject: string;
  readonly seq: number;
  readonly data: Uint8Array;
  readonly headers: MsgHdrs | undefined;
  readonly info: { readonly redeliveryCount: number };
  ack(): void;
  nak(millis?: number): void;
  term(reason?: string): void;
}

/** Where the steps file what fails, and clear it when it works again (a ProblemBoard). */
export type ProblemReporter = Pick<ProblemBoard, 'fail' | 'recover'>;

/** The heartbeat areas of the pipeline: a problem of one is cleared when that area works again. */
const TranslatorAreas = {
  /** OffsetCommitted events whose payload cannot be decoded (DECODE_ERROR). */
  readCommits: 'read commits',
  /** Reading the target: a failed round of the locator, or a partition that could not be read. */
  locateAnchors: 'locate anchors',
  /** Publishing OffsetTranslated events to JetStream. */
  publishTranslations: 'publish translations',
  /** Making watched translations again (pipeline/revisions.ts). */
  reviseTranslations: 'revise translations',
} as const;

/** What a translation pipeline needs. */
export interface TranslationPipelineOptions {
  names: Names;
  /** Alias of the source cluster of the link. */
  source: string;
  /** Alias of the target cluster. */
  target: string;
  /** Shared by the links of a target: many groups at one position ask it the same question. */
  locator: Locator;
  /** The learned positions of first copies on the target's partitions. */
  positions: PositionMemory;
  /**
   * Publishes events, each unless its key's translation in the stream is newer, and resolves with the
   * outcome of each once JetStream answered all of them (publishNewest with translationOrder).
   */
  publish: (messages: RankedMessage<TranslationRank>[]) => Promise<readonly NewestOutcome<TranslationRank>[]>;
  /** After how long a record that has not arrived is given up on (0: never). */
  pendingFallbackAfterMs: number;
  /** The backoff of pending translations. */
  pendingRetry: PendingRetry;
  /** translator.revisionWindowMs and the watch's size. Default: no revisions. */
  revisions?: RevisionLimits;
  tracer: Tracer;
  logger: Logger;
  /**
   * Counts one handled commit by outcome name (`exact`, `pending`, `undecodable`..., `superseded`: not
   * published, the stream holds a newer translation of the key).
   */
  record: (outcome: string) => void;
  /** How the link's replicator names the topics on the target (config `links[].topicNames`). Default: the same names. */
  topicNames?: TopicNames | undefined;
  /** Which groups and topics go along the link (config `links[].groups`, `links[].topics`). Default: all. */
  filter?: LinkFilter | undefined;
  /** Where failures are filed; see TranslatorAreas. Default: nowhere. */
  problems?: ProblemReporter;
  clock?: () => number;
}

/** One source commit on its way through the batch. */
interface Work {
  message: CommittedMessage;
  event: OffsetCommitted;
  span: Span;
  translation?: Translation;
  /** Not published: the rank of the newer translation of the key the stream holds. */
  superseded?: TranslationRank;
  /** The target partition's high watermark when it was located. */
  highWatermark?: number;
}

/** The translation pipeline of one link. */
export class TranslationPipeline {
  private readonly clock: () => number;
  private readonly link: Link;
  /** The keys whose last translation is pending. */
  readonly pending: PendingTranslations;
  /** Translations that may still be revised forward. */
  readonly revisions: RevisionWatch;
  /** When the last batch was published (epoch ms); 0 before the first. */
  lastEventAtMs = 0;
  /** The durable consumer the link's commits are delivered to, and the subjects it reads. */
  private readonly consumer: { durable: string; filterSubject: string };
  /** The subjects the link's translations go on (names the `publish` spans). */
  private readonly translatedSubjects: string;
  private readonly filter: LinkFilter;

  constructor(private readonly options: TranslationPipelineOptions) {
    this.clock = options.clock ?? Date.now;
    this.pending = new PendingTranslations(this.clock);
    this.link = { source: options.source, target: options.target };
    this.consumer = {
      durable: translatorDurable(options.source, options.target),
      filterSubject: options.names.committedFilter(options.source),
    };
    this.translatedSubjects = options.names.translatedFilter(options.source, options.target);
    this.filter = options.filter ?? linkFilter({});
    this.revisions = new RevisionWatch(
      options.revisions ?? { windowMs: 0, intervalMs: 1_000, maxWatched: 0 },
    );
  }

  /**
   * Handles a batch and settles its messages: older messages of a key and those that need no translation
   * are acknowledged at once, undecodable ones terminated; the rest once their translations are stored,
   * pending ones handed back with a delay. Rejects when the target could not be read or the translations
   * could not be published; the caller hands the unsettled messages back.
   */
  async handleBatch(messages: readonly CommittedMessage[]): Promise<void> {
    const work = this.intake(messages);
    const toLocate = work.filter((w) => w.translation === undefined);
    let located: AnchorLocations[];
    try {
      located = await this.locate(toLocate.map((w) => w.event));
    } catch (error: unknown) {
      for (const w of work) w.span.end();
      throw error;
    }
    const nowMs = this.clock();
    toLocate.forEach((w, i) => {
      const highWatermark = located[i]!.bounds?.highWatermark;
      if (highWatermark !== undefined) w.highWatermark = highWatermark;
      w.translation = buildTranslation(w.event, located[i]!, {
        nowMs,
        deliveryCount: w.message.info.redeliveryCount,
        pendingFallbackAfterMs: this.options.pendingFallbackAfterMs,
      });
      this.learn(w.event, w.translation);
    });
    await this.publish(work);
    this.schedule(work);
  }

  /** The newest message per key, read: what needs translating, with spans started and early decisions. */
  private intake(messages: readonly CommittedMessage[]): Work[] {
    const { newest, superseded } = newestPerSubject(messages);
    // Only the newest event of each key matters; older ones in the same batch are done.
    for (const message of superseded) message.ack();
    const work: Work[] = [];
    let unusable: OffsetSyncError | undefined;
    let readable = false;
    for (const message of newest) {
      const read = readCommit(message, this.link.source, this.options.names);
      if (read.kind === 'unusable') {
        this.options.logger.error(
          { err: read.error, subject: message.subject, outcome: read.outcome },
          'unusable committed event; terminated',
        );
        this.options.record(read.outcome);
        // Redelivering it would never help. Without a reason: nats-server 2.9 ignores a +TERM with one.
        message.term();
        unusable = read.error;
        continue;
      }
      readable = true;
      if (read.kind === 'no-translation') {
        // Deletions need no translation; the committer does not delete offsets on targets. A type of a
        // newer build is counted, so that a translator older than its collector shows.
        message.ack();
        if (read.unknownType !== undefined) this.options.record('unknown_type');
        continue;
      }
      if (this.filter.commit(read.event.group, read.event.topic) !== undefined) {
        // Not for this link's target (links[].groups / topics): never translated, counted.
        message.ack();
        this.options.record('excluded');
        continue;
      }
      const { name, options } = messagingSpan({
        operation: 'process',
        stage: 'translate',
        subject: message.subject,
        subjectTemplate: this.consumer.filterSubject,
        consumer: this.consumer.durable,
        attributes: {
          'offsetsync.source': this.link.source,
          'offsetsync.target': this.link.target,
          'offsetsync.group': read.event.group,
          'offsetsync.topic': read.event.topic,
          'offsetsync.partition': read.event.partition,
        },
      });
      const span = this.options.tracer.startSpan(name, options, read.trace);
      const target = this.targetTopicOf(read.event);
      if (target.kind === 'replicated') span.setAttribute('offsetsync.target_topic', target.topic);
      const translation = decideWithoutTarget(read.event, target);
      work.push({ message, event: read.event, span, translation });
    }
    if (unusable !== undefined) this.options.problems?.fail(TranslatorAreas.readCommits, unusable);
    else if (readable) this.options.problems?.recover(TranslatorAreas.readCommits);
    return work;
  }

  /** Locates the anchors; a round that fails, or a partition that could not be read, is a problem. */
  private async locate(events: readonly OffsetCommitted[]): Promise<AnchorLocations[]> {
    const { source, target } = this.link;
    let located: AnchorLocations[];
    try {
      located = await locateAnchors(
        this.options.locator,
        events.map((event) => ({
          event,
          targetTopic: this.replicatedTopic(event),
          floor: this.options.positions.floor(
            source,
            target,
            event.topic,
            event.partition,
            Math.min(event.lastConsumed?.offset ?? Infinity, event.nextRecord?.offset ?? Infinity),
          ),
        })),
      );
    } catch (error: unknown) {
      this.options.problems?.fail(
        TranslatorAreas.locateAnchors,
        toOffsetSyncError(error, { operation: 'locate anchors on the target' }),
      );
      throw error;
    }
    // A learned point that no longer holds: the target changed (truncated, or deleted and recreated).
    events.forEach((event, i) => {
      if (located[i]?.floorFailed === true)
        this.options.positions.forget(source, target, event.topic, event.partition);
    });
    // A partition that could not be read leaves its translation pending: retried, and reported here.
    // One log line per new problem (a retry of the same one is on the heartbeat, not in the log).
    const [failure] = readFailures(located);
    if (failure === undefined) this.options.problems?.recover(TranslatorAreas.locateAnchors);
    else if (this.options.problems?.fail(TranslatorAreas.locateAnchors, failure) ?? true)
      this.options.logger.warn(
        { err: failure, source, target },
        'cannot read the target around an anchor; its translations wait and are retried',
      );
    return located;
  }

  /** Remembers where an exact translation found the first copy of its anchor. */
  private learn(event: OffsetCommitted, translation: Translation): void {
    if (translation.learned === undefined) return;
    this.options.positions.learn(this.link.source, this.link.target, event.topic, event.partition, {
      anchor: translation.learned.anchor,
      targetOffset: translation.learned.targetOffset,
      topicId: translation.learned.topicId,
    });
  }

  /**
   * Makes the watched translations whose target partition grew since again, and publishes each that now
   * lands later as the next revision of its version. Rejects when the target could not be read or the
   * revisions could not be published; the watch is kept for the next call.
   */
  async revise(): Promise<void> {
    const watched = this.revisions.due(this.clock());
    if (watched.length === 0) return;
    try {
      const bounds = await this.options.locator.partitionBounds([
        ...new Map(
          watched.map((w) => {
            const topic = this.replicatedTopic(w.event);
            return [partitionKey(topic, w.event.partition), { topic, partition: w.event.partition }];
          }),
        ).values(),
      ]);
      const grown = watched.filter((w) => {
        const now = bounds.get(partitionKey(this.replicatedTopic(w.event), w.event.partition));
        return now !== undefined && now.highWatermark !== w.highWatermark;
      });
      if (grown.length === 0) return;
      const located = await this.locate(grown.map((w) => w.event));
      const nowMs = this.clock();
      const revised: Array<{ watched: WatchedTranslation; translation: Translation; highWatermark: number }> =
        [];
      grown.forEach((w, i) => {
        const translation = buildTranslation(w.event, located[i]!, {
          nowMs,
          deliveryCount: 1,
          pendingFallbackAfterMs: 0,
        });
        const highWatermark = located[i]!.bounds?.highWatermark ?? w.highWatermark;
        const final =
          translation.outcome === TranslationOutcome.TRANSLATION_OUTCOME_EXACT ||
          translation.outcome === TranslationOutcome.TRANSLATION_OUTCOME_INEXACT;
        if (final && isForwardRevision(w, translation.targetOffset)) {
          revised.push({ watched: w, translation, highWatermark });
        } else if (this.revisions.isWatched(w)) {
          // Not later: still watched while the window may change, from the grown partition on.
          const settled = final && translation.revisable !== true;
          const made = final ? { highWatermark } : {};
          this.revisions.note(this.revisions.looked(w, made, nowMs), !settled);
        }
      });
      await this.publishRevisions(revised, nowMs);
      this.options.problems?.recover(TranslatorAreas.reviseTranslations);
    } catch (error: unknown) {
      this.options.problems?.fail(
        TranslatorAreas.reviseTranslations,
        toOffsetSyncError(error, { operation: 'revise translations' }),
      );
      throw error;
    }
  }

  /** Publishes the revisions; each stays watched while it may be revised again. */
  private async publishRevisions(
    revised: ReadonlyArray<{ watched: WatchedTranslation; translation: Translation; highWatermark: number }>,
    translatedAtMs: number,
  ): Promise<void> {
    if (revised.length === 0) return;
    const published = revised.map(({ watched, translation }) =>
      this.publishing(
        'revise',
        {
          link: this.link,
          event: watched.event,
          translation,
          attempts: 1,
          translatedAtMs,
          revision: watched.revision + 1,
        },
        context.active(),
        { 'offsetsync.revision': watched.revision + 1 },
      ),
    );
    let outcomes: readonly NewestOutcome<TranslationRank>[];
    try {
      outcomes = await this.options.publish(published.map((p) => p.message));
    } catch (error: unknown) {
      for (const { span } of published) failSpan(span, error);
      throw error;
    } finally {
      for (const { span } of published) span.end();
    }
    revised.forEach(({ watched, translation, highWatermark }, i) => {
      if (outcomes[i]?.kind === 'superseded') {
        // A newer translation of the key is in the stream; one made here meanwhile stays watched.
        if (this.revisions.isWatched(watched)) this.revisions.forget(watched.subject);
        return;
      }
      this.options.record('revised');
      this.options.logger.info(
        {
          subject: watched.subject,
          version: formatVersion(watched.event.version),
          revision: watched.revision + 1,
          from: watched.targetOffset,
          to: translation.targetOffset,
        },
        'translation revised forward: more copies of consumed records followed on the target',
      );
      if (!this.revisions.isWatched(watched)) return;
      const made = { revision: watched.revision + 1, targetOffset: translation.targetOffset, highWatermark };
      this.revisions.note(
        this.revisions.looked(watched, made, translatedAtMs),
        translation.revisable === true,
      );
    });
    this.lastEventAtMs = translatedAtMs;
  }

  /** Publishes every translation; ends the spans. */
  private async publish(work: readonly Work[]): Promise<void> {
    const translatedAtMs = this.clock();
    const messages: RankedMessage<TranslationRank>[] = [];
    const published: Array<{ work: Work; span: Span }> = [];
    for (const w of work) {
      if (w.translation === undefined) continue;
      const { message, span } = this.publishing(
        'translate',
        {
          link: this.link,
          event: w.event,
          translation: w.translation,
          attempts: w.message.info.redeliveryCount,
          translatedAtMs,
        },
        trace.setSpan(context.active(), w.span),
      );
      published.push({ work: w, span });
      messages.push(message);
      w.span.setAttribute('offsetsync.outcome', outcomeName(w.translation.outcome));
    }
    try {
      const outcomes = await this.options.publish(messages);
      outcomes.forEach((outcome, i) => {
        if (outcome.kind !== 'superseded') return;
        const { work: w, span } = published[i]!;
        w.superseded = outcome.stored;
        w.span.setAttribute('offsetsync.superseded', true);
        span.setAttribute('offsetsync.superseded', true);
        this.options.logger.debug(
          {
            subject: messages[i]!.subject,
            version: formatVersion(w.event.version),
            storedVersion: formatVersion(outcome.stored.version),
          },
          'translation not published: the stream holds a newer one of the key',
        );
      });
      this.options.problems?.recover(TranslatorAreas.publishTranslations);
    } catch (error: unknown) {
      this.options.problems?.fail(TranslatorAreas.publishTranslations, error);
      for (const { span } of published) failSpan(span, error);
      throw error;
    } finally {
      for (const { span } of published) span.end();
      for (const w of work) w.span.end();
    }
    this.lastEventAtMs = translatedAtMs;
  }

  /** Where `event`'s topic is on the target, by the link's topic names. */
  private targetTopicOf(event: OffsetCommitted): TargetTopic {
    return targetTopic(this.options.topicNames, this.link.source, event.topic);
  }

  /** The target topic of an event that was found replicated at intake (the only ones located). */
  private replicatedTopic(event: OffsetCommitted): string {
    const target = this.targetTopicOf(event);
    return target.kind === 'replicated' ? target.topic : event.topic;
  }

  /**
   * The message of one translation and its `publish` span, a child of `parent`; the message carries the
   * span's context, so the committer's span follows it.
   */
  private publishing(
    stage: Extract<SyncStage, 'translate' | 'revise'>,
    p: PublishedTranslation,
    parent: Context,
    attributes: Attributes = {},
  ): { message: RankedMessage<TranslationRank>; span: Span } {
    const address = translationAddress(this.options.names, p);
    const { subject, msgId } = address;
    const target = this.targetTopicOf(p.event);
    const { name, options } = messagingSpan({
      operation: 'publish',
      stage,
      subject,
      subjectTemplate: this.translatedSubjects,
      messageId: msgId,
      attributes: {
        'offsetsync.source': this.link.source,
        'offsetsync.target': this.link.target,
        'offsetsync.group': p.event.group,
        'offsetsync.topic': p.event.topic,
        'offsetsync.partition': p.event.partition,
        'offsetsync.outcome': outcomeName(p.translation.outcome),
        ...(target.kind === 'replicated' ? { 'offsetsync.target_topic': target.topic } : {}),
        ...attributes,
      },
    });
    const span = this.options.tracer.startSpan(name, options, parent);
    const message = translatedMessage(
      this.options.names,
      { ...p, targetTopic: target.kind === 'replicated' ? target.topic : undefined },
      trace.setSpan(parent, span),
      address,
    );
    return { message, span };
  }

  /** Settles the published commits: acknowledged, or handed back while pending. */
  private schedule(work: readonly Work[]): void {
    for (const w of work) {
      if (w.translation === undefined) continue;
      if (w.superseded !== undefined) {
        // A newer translation of the key is stored: this commit is done, pending or not. The key waits
        // for its record only while that newer one is pending.
        this.options.record('superseded');
        if (w.superseded.stage === FINAL_STAGE) this.pending.settled(w.message.subject, { kind: 'ack' });
        this.revisions.forget(w.message.subject);
        w.message.ack();
        continue;
      }
      if (w.translation.revisable === true) {
        const made = { targetOffset: w.translation.targetOffset, highWatermark: w.highWatermark ?? -1 };
        this.revisions.note(this.revisions.first(w.message.subject, w.event, made, this.clock()), true);
      } else {
        this.revisions.forget(w.message.subject);
      }
      this.options.record(outcomeName(w.translation.outcome));
      const settlement = settlementOf(
        w.translation,
        w.message.info.redeliveryCount,
        this.options.pendingRetry,
      );
      this.pending.settled(w.message.subject, settlement);
      if (settlement.kind === 'nak') w.message.nak(settlement.delayMs);
      else w.message.ack();
    }
  }
}
