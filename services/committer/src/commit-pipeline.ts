// What the committer does with one batch of translated events of one link (source -> target):
//   decode -> keep the newest translation per key -> per consumer group: read the group's committed
//   offsets on the target, decide and reserve each key in KV (compare-and-set), commit every reserved
//   partition of the group in one OffsetCommit, restore the reservations whose commit failed, make sure
//   the newest reserved version is the last one written to Kafka -> publish one OffsetApplied event per
//   translation -> settle the inputs. Each group is published and settled as soon as it is done, not
//   after the whole batch.
// Inputs are acknowledged only after JetStream acknowledged the events (at-least-once); a crash at any
// point leads to a redelivery, which the version check turns into a harmless repeat.
import { context, SpanKind, SpanStatusCode, trace, type Span, type Tracer } from '@opentelemetry/api';
import { headers, type MsgHdrs } from 'nats';
import {
  appliedMessageId,
  ErrorCodes,
  extractTraceContext,
  formatVersion,
  formatCommitMetadata,
  injectTraceContext,
  isOffsetSyncError,
  OffsetApplied,
  OffsetSyncError,
  OffsetTranslated,
  parseCommitMetadata,
  TranslationOutcome,
  type Names,
  type Version,
  EVENT_TYPE_HEADER,
} from '@offsetsync/contracts';
import { type StreamMessage } from '@offsetsync/jetstream';
import { type CommitAnswer, type CommitEntry, type CommittedOffset } from '@offsetsync/kafka';
import { type Logger } from '@offsetsync/runtime';
import type { ActiveGroups } from './active-groups.js';
import {
  appliedEvent,
  appliedSubject,
  type AppliedOutcomeName,
  type AppliedReport,
} from './applied-events.js';
import type { AppliedRecord } from './applied-record.js';
import type { AppliedVersionsStore, StoredEntry } from './applied-versions-store.js';
import {
  decideApply,
  holdsReservation,
  newerReservation,
  restoredRecord,
  type ApplyDecision,
  type TargetCommit,
} from './apply-decision.js';
import { classifyCommitError, classifyFailure, failureDetail } from './commit-result.js';
import { mapWithConcurrency } from './concurrency.js';
import type { CommitterOutcome, OutcomeCounters } from './outcome-counters.js';
import { retryDelayMs, type BackoffSettings } from './retry-backoff.js';
import { byGroup, coalesceByKey } from './translation-coalescer.js';
import { VersionCache } from './version-cache.js';

/** The parts of a JetStream message the pipeline uses (JsMsg has them). */
export interface InboundMessage {
  readonly data: Uint8Array;
  readonly headers: MsgHdrs | undefined;
  readonly info: { readonly redeliveryCount: number };
  ack(): void;
  nak(millis?: number): void;
  term(reason?: string): void;
}

/** The target cluster's group offsets (KafkaAdapter has these). */
export interface TargetCluster {
  fetchCommittedOffsets(groupId: string, topics?: readonly string[]): Promise<CommittedOffset[]>;
  commitOffsets(groupId: string, entries: readonly CommitEntry[]): Promise<CommitAnswer[]>;
}

export interface CommitPipelineOptions {
  names: Names;
  /** Alias of the source cluster of the link. */
  source: string;
  /** Alias of the target cluster. */
  target: string;
  store: AppliedVersionsStore;
  cluster: TargetCluster;
  /** Publishes events and resolves once JetStream acknowledged all of them (publishAll). */
  publish: (messages: StreamMessage[]) => Promise<unknown>;
  counters: OutcomeCounters;
  activeGroups: ActiveGroups;
  /** Delay before a transiently failed event is delivered again. */
  backoff: BackoffSettings;
  tracer: Tracer;
  logger: Logger;
  /**
   * When the application made its commit of `offset` on the target, if a collector reading the target
   * cluster published it; undefined otherwise (one-way links).
   */
  applicationCommitTime?: (
    group: string,
    topic: string,
    partition: number,
    offset: number,
  ) => Promise<number | undefined>;
  /** Told after each Kafka call: undefined when the target answered, the error when it could not be reached. */
  onKafkaProblem?: (error: OffsetSyncError | undefined) => void;
  /** Keys whose last known KV record and revision are kept in memory (the CAS fast path). Default: `100000`. */
  versionCacheSize?: number;
  clock?: () => number;
}

/**
 * Consumer groups handled at once within a batch. The Kafka adapter spreads them over its group
 * connections; more than those in flight keeps every connection busy while the others wait for NATS.
 */
const GROUP_CONCURRENCY = 64;
/** KV operations in flight at once within one group. */
const KEY_CONCURRENCY = 32;
/** Compare-and-set attempts on one key before the event is retried later. */
const MAX_CAS_ATTEMPTS = 8;
/** The guess for a key this instance has not seen: never written. */
const NEW_KEY: StoredEntry = { record: undefined, revision: 0 };
/** Rounds of the post-commit check (see ensureNewestCommittedLast). */
const MAX_RECOMMIT_ROUNDS = 5;

/** What became of one translation. */
type Fate =
  | { kind: 'report'; report: AppliedReport; counted: CommitterOutcome }
  | { kind: 'retry'; error: OffsetSyncError };

interface Item {
  message: InboundMessage;
  span: Span;
  translation: OffsetTranslated;
  version: Version;
  /** The applied-versions KV key. */
  key: string;
  group: string;
  fate?: Fate;
}

interface Reservation {
  item: Item;
  decision: ApplyDecision;
  /** Set when the decision's record was written: the revision written and the record it replaced. */
  written?: { revision: number; previous: AppliedRecord | undefined };
}

const COUNTED: Record<AppliedOutcomeName, CommitterOutcome> = {
  APPLIED: 'applied',
  STALE_VERSION: 'skipped_stale_version',
  ACTIVE_ON_TARGET: 'skipped_active_on_target',
  TARGET_AHEAD: 'skipped_target_ahead',
  COMMIT_FAILED: 'skipped_commit_failed',
};

export class CommitPipeline {
  private readonly clock: () => number;
  private readonly versions: VersionCache;
  /** Version of the most recent translation handled. */
  lastVersion: Version | undefined;
  /** When the last translation was handled (epoch ms); 0 before the first. */
  lastEventAtMs = 0;

  constructor(private readonly options: CommitPipelineOptions) {
    this.clock = options.clock ?? Date.now;
    this.versions = new VersionCache(options.versionCacheSize ?? 100_000);
  }

  /**
   * Handles a batch and settles every message: acknowledged once its OffsetApplied event is stored (or at
   * once when there is nothing to report), handed back with a delay after a transient failure, terminated
   * when it cannot be read. A group's messages are settled as soon as its events are stored. Rejects when
   * some events could not be published; the caller hands the unsettled messages back.
   */
  async handleBatch(messages: readonly InboundMessage[]): Promise<void> {
    const items = messages.flatMap((message) => this.accept(message) ?? []);
    try {
      const { newest, superseded } = coalesceByKey(items);
      const decidedAtMs = this.clock();
      for (const { item, by } of superseded) {
        item.fate = report(
          'STALE_VERSION',
          -1,
          `superseded by version ${formatVersion(by.version)} in the same batch`,
          decidedAtMs,
        );
      }
      const supersededOf = byGroup(superseded.map(({ item }) => item));
      let publishError: { error: unknown } | undefined;
      await mapWithConcurrency([...byGroup(newest)], GROUP_CONCURRENCY, async ([group, groupItems]) => {
        const { postCommitCheck } = await this.handleGroup(group, groupItems);
        const older = supersededOf.get(group) ?? [];
        try {
          // The check concerns newer versions than these events report; it need not hold them up.
          await Promise.all([
            postCommitCheck,
            (async () => {
              // The applied stream keeps the last event per key: the superseded ones go first, so the
              // newest translation's outcome is what stays.
              await this.publishReports(older);
              await this.publishReports(groupItems);
            })(),
          ]);
        } catch (error: unknown) {
          publishError ??= { error };
          return;
        }
        this.settle([...older, ...groupItems]);
      });
      if (publishError !== undefined) throw publishError.error;
    } catch (error: unknown) {
      for (const item of items) {
        item.span.recordException(error instanceof Error ? error : String(error));
        item.span.setStatus({ code: SpanStatusCode.ERROR });
      }
      throw error;
    } finally {
      for (const item of items) item.span.end();
    }
  }

  /**
   * Decodes one message. Returns the item when it carries a target offset to commit; settles it at once
   * otherwise (not translated: acknowledged; unreadable: terminated).
   */
  private accept(message: InboundMessage): Item | undefined {
    const span = this.options.tracer.startSpan(
      'offsetsync.commit',
      {
        kind: SpanKind.CONSUMER,
        attributes: { 'offsetsync.source': this.options.source, 'offsetsync.target': this.options.target },
      },
      extractTraceContext(message.headers),
    );
    const kind = message.headers?.get(EVENT_TYPE_HEADER) ?? '';
    let translation: OffsetTranslated | undefined;
    let problem: string | undefined;
    if (kind !== '' && kind !== 'OffsetTranslated') problem = `event type ${kind}`;
    else {
      try {
        translation = OffsetTranslated.decode(message.data);
      } catch (error: unknown) {
        problem = `undecodable OffsetTranslated: ${error instanceof Error ? error.message : String(error)}`;
      }
    }
    if (translation !== undefined) {
      span.setAttributes({
        'offsetsync.group': translation.group,
        'offsetsync.topic': translation.topic,
        'offsetsync.partition': translation.partition,
        'offsetsync.version': formatVersion(translation.version),
      });
      problem = this.validate(translation);
    }
    if (problem !== undefined || translation === undefined) {
      this.finishEarly(span, message, 'malformed', problem ?? 'no event');
      return undefined;
    }
    switch (translation.outcome) {
      case TranslationOutcome.TRANSLATION_OUTCOME_PENDING:
        this.finishEarly(span, message, 'not_translated_pending');
        this.noteHandled(translation.version);
        return undefined;
      case TranslationOutcome.TRANSLATION_OUTCOME_REFUSED:
        this.finishEarly(span, message, 'not_translated_refused');
        this.noteHandled(translation.version);
        return undefined;
      default:
        break;
    }
    const version = translation.version!;
    return {
      message,
      span,
      translation,
      version,
      group: translation.group,
      key: this.options.names.linkKey(this.options.source, this.options.target, translation),
    };
  }

  /** Why a decoded translation cannot be handled, or undefined when it can. */
  private validate(t: OffsetTranslated): string | undefined {
    if (t.sourceCluster !== this.options.source || t.targetCluster !== this.options.target) {
      return `link ${t.sourceCluster} -> ${t.targetCluster} is not ${this.options.source} -> ${this.options.target}`;
    }
    if (t.version === undefined) return 'no version';
    if (t.topic === '' || !Number.isInteger(t.partition) || t.partition < 0) return 'no topic partition';
    switch (t.outcome) {
      case TranslationOutcome.TRANSLATION_OUTCOME_EXACT:
      case TranslationOutcome.TRANSLATION_OUTCOME_INEXACT:
        return t.targetOffset >= 0 ? undefined : `target offset ${t.targetOffset}`;
      case TranslationOutcome.TRANSLATION_OUTCOME_PENDING:
      case TranslationOutcome.TRANSLATION_OUTCOME_REFUSED:
        return undefined;
      default:
        return `translation outcome ${String(t.outcome)}`;
    }
  }

  private finishEarly(
    span: Span,
    message: InboundMessage,
    outcome: CommitterOutcome,
    problem?: string,
  ): void {
    span.setAttribute('offsetsync.outcome', outcome);
    if (problem === undefined) {
      message.ack();
    } else {
      // Redelivering a message that cannot be read would never help.
      this.options.logger.warn({ problem }, 'terminating an unusable translated event');
      span.setStatus({ code: SpanStatusCode.ERROR, message: problem });
      message.term(problem);
    }
    span.end();
    this.options.counters.add(outcome);
  }

  /**
   * Decides, reserves and commits one group's translations, setting every item's fate. Resolves once the
   * fates are set, with the post-commit check still running (it never rejects).
   */
  private async handleGroup(
    group: string,
    items: Item[],
  ): Promise<{ postCommitCheck: Promise<void> | undefined }> {
    const none = { postCommitCheck: undefined };
    const now = this.clock();
    const waitingUntil = this.options.activeGroups.waitingUntil(group, now);
    if (waitingUntil !== undefined) {
      for (const item of items) {
        item.fate = report(
          'ACTIVE_ON_TARGET',
          -1,
          `the group has live members on the target; the next commit is tried after ${new Date(waitingUntil).toISOString()}`,
          now,
        );
      }
      return none;
    }

    let committed: CommittedOffset[];
    try {
      committed = await this.options.cluster.fetchCommittedOffsets(group, [
        ...new Set(items.map((i) => i.translation.topic)),
      ]);
      this.options.onKafkaProblem?.(undefined);
    } catch (error: unknown) {
      this.groupFailed(group, items, error);
      return none;
    }
    const commitOf = new Map<string, TargetCommit>(
      committed.map((c) => [partitionKey(c.topic, c.partition), c]),
    );
    const lookUpTime = this.options.applicationCommitTime;
    if (lookUpTime !== undefined) {
      await mapWithConcurrency(committed, KEY_CONCURRENCY, async (c) => {
        if (parseCommitMetadata(c.metadata) !== undefined) return;
        const commitTimestampMs = await lookUpTime(group, c.topic, c.partition, c.offset).catch(
          () => undefined,
        );
        if (commitTimestampMs !== undefined)
          commitOf.set(partitionKey(c.topic, c.partition), { ...c, commitTimestampMs });
      });
    }

    const reservations: Reservation[] = [];
    await mapWithConcurrency(items, KEY_CONCURRENCY, async (item) => {
      try {
        const target = commitOf.get(partitionKey(item.translation.topic, item.translation.partition));
        reservations.push(await this.reserve(item, target));
      } catch (error: unknown) {
        this.options.logger.warn(
          { err: error, key: item.key },
          'could not reserve the version in KV; will retry',
        );
        item.fate = { kind: 'retry', error: asRetryable(error) };
      }
    });

    const toCommit: (Reservation & { decision: { kind: 'apply' } })[] = [];
    for (const r of reservations) {
      const { decision } = r;
      switch (decision.kind) {
        case 'skip':
          r.item.fate = report(decision.reason, -1, decision.detail, now);
          break;
        case 'already-applied':
          r.item.fate = {
            kind: 'report',
            counted: 'already_applied',
            report: {
              outcome: 'APPLIED',
              targetOffset: decision.record.targetOffset,
              detail: 'already committed on the target (redelivered)',
              appliedAtMs: decision.record.appliedAtMs,
            },
          };
          break;
        case 'apply':
          toCommit.push({ ...r, decision });
          break;
      }
    }
    if (toCommit.length === 0) return none;

    let answers: CommitAnswer[];
    try {
      answers = await this.options.cluster.commitOffsets(
        group,
        toCommit.map(({ item, decision }) => this.commitEntry(item, decision.record)),
      );
      this.options.onKafkaProblem?.(undefined);
    } catch (error: unknown) {
      await mapWithConcurrency(toCommit, KEY_CONCURRENCY, (r) => this.restore(r));
      this.groupFailed(
        group,
        toCommit.map((r) => r.item),
        error,
      );
      return none;
    }
    const appliedAtMs = this.clock();

    const failed: Reservation[] = [];
    const applied: (Reservation & { decision: { kind: 'apply' } })[] = [];
    let refusal: string | undefined;
    toCommit.forEach((r, i) => {
      const error = answers[i]?.error;
      const result = classifyCommitError(error);
      switch (result.kind) {
        case 'committed':
          r.item.fate = report('APPLIED', r.decision.record.targetOffset, '', appliedAtMs);
          this.options.counters.recordLag(appliedAtMs, r.item.translation.sourceCommitTimestampMs, {
            source: this.options.source,
            target: this.options.target,
          });
          applied.push(r);
          return;
        case 'active':
          refusal ??= error?.message ?? 'the group has live members';
          r.item.fate = report(
            'ACTIVE_ON_TARGET',
            -1,
            'the group has live members on the target; the broker refuses commits from outside the group',
            appliedAtMs,
          );
          break;
        case 'retry':
          r.item.fate = { kind: 'retry', error: result.error };
          break;
        case 'failed':
          r.item.fate = report('COMMIT_FAILED', -1, result.detail, appliedAtMs);
          break;
      }
      failed.push(r);
    });
    if (refusal !== undefined) {
      this.options.activeGroups.refused(group, now);
      // Once per group per wait period: until then the group's events are skipped without asking the broker.
      this.options.logger.warn(
        { group },
        'group has live members on the target; its offsets are not committed until it is empty and the source commits again',
      );
    }
    // A failed commit must not be remembered as applied.
    await mapWithConcurrency(failed, KEY_CONCURRENCY, (r) => this.restore(r));
    return { postCommitCheck: this.ensureNewestCommittedLast(group, applied) };
  }

  /**
   * Reads the key's record, decides, and writes the decision's record with compare-and-set. A concurrent
   * writer (another committer instance) makes the write fail: read and decide again.
   */
  private async reserve(item: Item, targetCommit: TargetCommit | undefined): Promise<Reservation> {
    const translation = {
      version: item.version,
      targetOffset: item.translation.targetOffset,
      sourceCommitTimestampMs: item.translation.sourceCommitTimestampMs,
    };
    for (let attempt = 0; attempt < MAX_CAS_ATTEMPTS; attempt++) {
      // The first attempt decides on a guess: what this instance last saw of the key, or, for a key it
      // has not seen, an empty key (after a start most keys are new: the bootstrap). The compare-and-set
      // write checks the guess. Every later attempt reads KV.
      const guess = attempt === 0 ? (this.versions.get(item.key) ?? NEW_KEY) : undefined;
      const entry = guess ?? (await this.read(item.key));
      if (entry.unreadable !== undefined) {
        this.options.logger.warn(
          { err: entry.unreadable, key: item.key },
          'unreadable applied-versions record; replacing it',
        );
      }
      const decision = decideApply({
        source: this.options.source,
        translation,
        stored: entry.record,
        targetCommit,
        nowMs: this.clock(),
      });
      const toWrite =
        decision.kind === 'apply'
          ? decision.reserve
            ? decision.record
            : undefined
          : decision.kind === 'skip'
            ? decision.record
            : undefined;
      if (toWrite === undefined) {
        // Nothing to write would check the guess: decide again on what KV holds.
        if (guess !== undefined) continue;
        return { item, decision };
      }
      const revision = await this.write(item.key, toWrite, entry.revision);
      if (revision !== undefined) return { item, decision, written: { revision, previous: entry.record } };
    }
    throw new OffsetSyncError(
      `applied-versions key ${item.key} kept changing (${MAX_CAS_ATTEMPTS} attempts)`,
      {
        code: ErrorCodes.INTERNAL,
        retryable: true,
        details: { key: item.key },
      },
    );
  }

  /**
   * Puts back the record a reservation replaced, after its Kafka commit failed. Only while KV still
   * holds that reservation: a newer version reserved meanwhile by another instance stays.
   */
  private async restore(r: Reservation): Promise<void> {
    if (r.written === undefined || r.decision.kind !== 'apply') return;
    const reserved = r.decision.record;
    let current: AppliedRecord | undefined = reserved;
    let revision = r.written.revision;
    for (let attempt = 0; attempt < MAX_CAS_ATTEMPTS; attempt++) {
      if (!holdsReservation(current, reserved)) return;
      const restored = restoredRecord(r.written.previous, current);
      const done =
        restored === undefined
          ? await this.remove(r.item.key, revision)
          : (await this.write(r.item.key, restored, revision)) !== undefined;
      if (done) return;
      ({ record: current, revision } = await this.read(r.item.key));
    }
    this.options.logger.warn(
      { key: r.item.key },
      'could not restore the applied-versions record after a failed commit',
    );
  }

  /**
   * The race this closes: instance A reserves version 1 of a key, instance B then reserves version 2 and
   * commits it, and only then does A's commit of version 1 reach the broker. Both commits succeed, and
   * the target ends on the older offset although KV says version 2. Reservations are ordered by the
   * compare-and-set, commits are not. So every instance, after its commit returned, reads the key again:
   * when a newer version was reserved in the meantime, that version's offset is committed again, so the
   * last write to Kafka is always the newest reserved version. (Whoever reserved the newest version
   * reserved it before that version's own commit; any older commit that lands later is followed by its
   * committer's check, which then sees the newest version and writes it once more.) A position the
   * target owns is left alone.
   */
  private async ensureNewestCommittedLast(
    group: string,
    applied: readonly (Reservation & { decision: { kind: 'apply' } })[],
  ): Promise<void> {
    let watched = applied.map((r) => ({ item: r.item, version: r.decision.record.version! }));
    try {
      for (let round = 0; round < MAX_RECOMMIT_ROUNDS && watched.length > 0; round++) {
        const newer = (
          await mapWithConcurrency(watched, KEY_CONCURRENCY, async (w) => {
            const { record } = await this.read(w.item.key);
            const newest = newerReservation(record, w.version);
            return newest === undefined ? undefined : { item: w.item, record: newest };
          })
        ).filter((n) => n !== undefined);
        if (newer.length === 0) return;
        this.options.logger.debug(
          { group, keys: newer.length },
          'newer versions were reserved while committing; committing them again so they are written last',
        );
        const answers = await this.options.cluster.commitOffsets(
          group,
          newer.map((n) => this.commitEntry(n.item, n.record)),
        );
        watched = newer
          .filter((_, i) => answers[i]?.error === undefined)
          .map((n) => ({ item: n.item, version: n.record.version! }));
      }
      if (watched.length > 0) {
        this.options.logger.warn(
          { group, keys: watched.length },
          'versions kept changing after the commit; the next source commit settles them',
        );
      }
    } catch (error: unknown) {
      // The commit itself succeeded and is reported; the instance that reserved the newer version, or the
      // next source commit, brings the target to the newest version.
      this.options.logger.warn({ err: error, group }, 'post-commit check failed');
    }
  }

  /** Reads a key from KV and remembers what it holds. */
  private async read(key: string): Promise<StoredEntry> {
    const entry = await this.options.store.read(key);
    this.versions.set(key, entry);
    return entry;
  }

  /** Compare-and-set write; remembers the record written, forgets the key when another writer came first. */
  private async write(
    key: string,
    record: AppliedRecord,
    expectedRevision: number,
  ): Promise<number | undefined> {
    this.versions.forget(key);
    const revision = await this.options.store.write(key, record, expectedRevision);
    if (revision !== undefined) this.versions.set(key, { record, revision });
    return revision;
  }

  private async remove(key: string, expectedRevision: number): Promise<boolean> {
    // The removal's own revision is not returned: the next use of the key reads KV.
    this.versions.forget(key);
    return this.options.store.remove(key, expectedRevision);
  }

  private commitEntry(item: Item, record: AppliedRecord): CommitEntry {
    const version = record.version!;
    return {
      topic: item.translation.topic,
      partition: item.translation.partition,
      offset: record.targetOffset,
      metadata: formatCommitMetadata(
        {
          origin: this.options.source,
          offsetsPartition: version.offsetsPartition,
          offsetsOffset: version.offsetsOffset,
        },
        '',
      ),
    };
  }

  /** A Kafka call for the whole group failed: retry its items later, or report them. */
  private groupFailed(group: string, items: readonly Item[], error: unknown): void {
    const result = classifyFailure(error);
    if (isOffsetSyncError(error) && error.code === ErrorCodes.KAFKA_UNREACHABLE)
      this.options.onKafkaProblem?.(error);
    const now = this.clock();
    for (const item of items) {
      if (result.kind === 'retry') item.fate = { kind: 'retry', error: result.error };
      else if (result.kind === 'active')
        item.fate = report('ACTIVE_ON_TARGET', -1, failureDetail(error), now);
      else item.fate = report('COMMIT_FAILED', -1, result.detail, now);
    }
    this.options.logger.warn(
      { err: error, group, events: items.length, retry: result.kind === 'retry' },
      result.kind === 'retry'
        ? 'target cluster call failed; the events will be retried'
        : 'target cluster call failed',
    );
  }

  private async publishReports(items: readonly Item[]): Promise<void> {
    const messages: StreamMessage[] = [];
    for (const item of items) {
      if (item.fate?.kind !== 'report') continue;
      const hdrs = headers();
      hdrs.set(EVENT_TYPE_HEADER, 'OffsetApplied');
      injectTraceContext(hdrs, trace.setSpan(context.active(), item.span));
      messages.push({
        subject: appliedSubject(this.options.names, item.translation),
        payload: OffsetApplied.encode(appliedEvent(item.translation, item.fate.report)).finish(),
        msgId: appliedMessageId(
          this.options.source,
          this.options.target,
          item.version,
          item.fate.report.outcome,
        ),
        headers: hdrs,
      });
    }
    if (messages.length > 0) await this.options.publish(messages);
  }

  private settle(items: readonly Item[]): void {
    for (const item of items) {
      const fate = item.fate;
      if (fate === undefined) throw new Error(`no outcome for ${item.key}`);
      if (fate.kind === 'report') {
        item.message.ack();
        item.span.setAttribute('offsetsync.outcome', fate.counted);
        if (fate.report.detail !== '') item.span.setAttribute('offsetsync.detail', fate.report.detail);
        this.options.counters.add(fate.counted);
      } else {
        item.message.nak(retryDelayMs(item.message.info.redeliveryCount, this.options.backoff));
        item.span.setAttribute('offsetsync.outcome', 'retried');
        item.span.recordException(fate.error);
        this.options.counters.add('retried');
      }
      this.noteHandled(item.version);
    }
  }

  private noteHandled(version: Version | undefined): void {
    if (version !== undefined) this.lastVersion = version;
    this.lastEventAtMs = this.clock();
  }
}

function report(outcome: AppliedOutcomeName, targetOffset: number, detail: string, atMs: number): Fate {
  return {
    kind: 'report',
    counted: COUNTED[outcome],
    report: { outcome, targetOffset, detail, appliedAtMs: atMs },
  };
}

function partitionKey(topic: string, partition: number): string {
  return `${topic}\u0000${partition}`;
}

function asRetryable(error: unknown): OffsetSyncError {
  if (isOffsetSyncError(error) && error.retryable) return error;
  return new OffsetSyncError('applied-versions store failed', {
    code: ErrorCodes.NATS_UNREACHABLE,
    retryable: true,
    cause: error,
  });
}
