// The step of the commit pipeline that keeps offsets outside the target's logs from being committed, before
// anything is reserved in KV: a target offset above its partition's log end offset (the high watermark)
// or below its log start offset is reported SKIPPED (OUT_OF_LOG_BOUNDS), counted, logged and filed as a
// problem. Bounds come from the LogBoundsCache: an offset the cached bounds show within costs nothing;
// the others are read again in one batched call per batch, never one per commit.
//
// A partition missing on the target is handled as the commit handles it (the broker answers its
// OffsetCommit with UNKNOWN_TOPIC_OR_PARTITION, which is retryable): the event is handed back with a
// backoff and tried again, until the topic exists or a newer translation replaces it; nothing is committed
// without a known bound.
import { ErrorCodes, formatVersion, isOffsetSyncError, OffsetSyncError } from '@offsetsync/contracts';
import type { PartitionBounds } from '@offsetsync/kafka';
import type { Logger } from '@offsetsync/runtime';
import { classifyFailure } from '../commit-result.js';
import type { LogBoundsCache } from '../log-bounds-cache.js';
import { logBoundsVerdict, outOfBoundsDetail } from '../log-bounds.js';
import type { Refusals } from '../refusals.js';
import {
  PipelineAreas,
  reported,
  targetTopicOf,
  type Fate,
  type ProblemReporter,
  type WorkItem,
} from './work-item.js';

/** What the bound check needs. */
export interface LogBoundsCheckOptions {
  cache: LogBoundsCache;
  refusals: Refusals;
  logger: Logger;
  clock: () => number;
  problems?: ProblemReporter | undefined;
}

function partitionKey(item: WorkItem): string {
  return `${targetTopicOf(item.translation)}\u0000${item.translation.partition}`;
}

/** The fate of an item whose partition's bounds could not be read because of `error`. Pure. */
function unreadBoundsFate(error: unknown, nowMs: number): Fate {
  if (
    isOffsetSyncError(error) &&
    (error.code === ErrorCodes.TOPIC_MISSING || error.code === ErrorCodes.PARTITION_MISSING)
  ) {
    return { kind: 'retry', error };
  }
  const result = classifyFailure(error);
  if (result.kind === 'retry') return { kind: 'retry', error: result.error };
  const detail = result.kind === 'failed' ? result.detail : 'the log bounds could not be read';
  return reported('COMMIT_FAILED', -1, `could not read the target log bounds: ${detail}`, nowMs);
}

/** Refuses the offsets that lie outside their target partition's log. */
export class LogBoundsCheck {
  constructor(private readonly options: LogBoundsCheckOptions) {}

  /**
   * Sets the fate of every item whose target offset lies outside its partition's log (OUT_OF_LOG_BOUNDS),
   * or whose bounds could not be read (retried, or COMMIT_FAILED when reading them failed for good), and
   * resolves with the other items, in their order. Never rejects.
   */
  async check(items: readonly WorkItem[]): Promise<WorkItem[]> {
    const { cache } = this.options;
    const unsure = items.filter(
      (item) => !cache.withinCached(item.translation, item.translation.targetOffset),
    );
    if (unsure.length === 0) return [...items];
    const partitions = [...new Map(unsure.map((item) => [partitionKey(item), item.translation])).values()];
    const fresh = new Map<string, PartitionBounds | OffsetSyncError>();
    try {
      const answers = await cache.refresh(
        partitions.map((t) => ({ topic: targetTopicOf(t), partition: t.partition })),
      );
      partitions.forEach((t, i) => {
        const answer = answers[i];
        fresh.set(
          `${targetTopicOf(t)}\u0000${t.partition}`,
          answer ??
            new OffsetSyncError(`no log bounds answered for ${targetTopicOf(t)}-${t.partition}`, {
              code: ErrorCodes.KAFKA_PROTOCOL,
            }),
        );
      });
    } catch (error: unknown) {
      this.options.problems?.fail(PipelineAreas.readLogBounds, error);
      this.options.logger.warn(
        { err: error, partitions: partitions.length, events: unsure.length },
        'could not read the target log bounds; the events are not committed until they can be checked',
      );
      const now = this.options.clock();
      for (const item of unsure) item.fate = unreadBoundsFate(error, now);
      return items.filter((item) => item.fate === undefined);
    }

    // One log line per new problem (a retry of the same one is on the heartbeat, not in the log).
    const failures = [...fresh.values()].filter((answer) => isOffsetSyncError(answer));
    if (failures.length === 0) this.options.problems?.recover(PipelineAreas.readLogBounds);
    else if (this.options.problems?.fail(PipelineAreas.readLogBounds, failures[0]) ?? true)
      this.options.logger.warn(
        { err: failures[0], partitions: failures.length },
        'could not read the log bounds of target partitions; their events are not committed until they can be checked',
      );
    const now = this.options.clock();
    for (const item of unsure) {
      const answer = fresh.get(partitionKey(item));
      if (answer === undefined || isOffsetSyncError(answer)) {
        item.fate = unreadBoundsFate(answer, now);
        continue;
      }
      this.judge(item, answer, now);
    }
    return items.filter((item) => item.fate === undefined);
  }

  /** Leaves an item within `bounds` alone; refuses one outside them. */
  private judge(item: WorkItem, bounds: PartitionBounds, now: number): void {
    const { translation } = item;
    const verdict = logBoundsVerdict(translation.targetOffset, bounds);
    if (verdict === 'within') return;
    const detail = outOfBoundsDetail(translation.targetOffset, verdict, bounds, translation);
    item.fate = reported('OUT_OF_LOG_BOUNDS', -1, detail, now);
    this.options.refusals.refused(
      'out_of_log_bounds',
      new OffsetSyncError(`refused to commit on ${item.message.subject}: ${detail}`, {
        code: ErrorCodes.OFFSET_OUT_OF_LOG_BOUNDS,
        // The heartbeat problem names the subject of the last refused event.
        details: { resource: `SUBJECT:${item.message.subject}`, verdict },
      }),
      {
        subject: item.message.subject,
        group: translation.group,
        topic: translation.topic,
        partition: translation.partition,
        version: formatVersion(translation.version),
        targetOffset: translation.targetOffset,
        logStartOffset: bounds.logStartOffset,
        logEndOffset: bounds.highWatermark,
        verdict,
      },
    );
  }
}
