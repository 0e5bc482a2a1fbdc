// What the committer does with one batch of translated events of one link (source -> target), step by
// step (pipeline/):
//   intake:        decode and check every message, settle those with nothing to commit, terminate those
//                  of another link or key than their subject's (refused);
//   log bounds:    refuse target offsets outside the target partition's log (cached bounds, read again
//                  once per batch for the offsets above the cached log end);
//   coalesce:      keep the newest translation per key (the older ones are reported stale);
//   group apply:   per consumer group, read the group's committed offsets on the target, decide and reserve
//                  each key in KV (reservations: compare-and-set), commit every reserved partition of the
//                  group in one OffsetCommit, restore the reservations whose commit failed;
//   re-commit:     make sure the newest reserved version is the last one written to Kafka;
//   reports:       publish one OffsetApplied event per translation, then settle the inputs.
// Each group is published and settled as soon as it is done, not after the whole batch. Inputs are
// acknowledged only after JetStream acknowledged the events (at-least-once); a crash at any point leads to
// a redelivery, which the version check turns into a harmless repeat.
import type { Tracer } from '@opentelemetry/api';
import type { Names, Version } from '@offsetsync/contracts';
import type { CommitterMode, StreamMessage } from '@offsetsync/jetstream';
import { failSpan, type Logger } from '@offsetsync/runtime';
import type { ActiveGroups } from './active-groups.js';
import type { AppliedVersionsStore } from './applied-versions-store.js';
import { mapWithConcurrency } from './concurrency.js';
import { LogBoundsCache } from './log-bounds-cache.js';
import type { OutcomeCounters } from './outcome-counters.js';
import { GroupApply, type ApplicationCommitTime } from './pipeline/group-apply.js';
import { coalesceBatch, Intake } from './pipeline/intake.js';
import { LogBoundsCheck } from './pipeline/log-bounds-check.js';
import { RecommitCheck } from './pipeline/recommit-check.js';
import { Reports } from './pipeline/reports.js';
import { Reservations } from './pipeline/reservations.js';
import { TargetCalls } from './pipeline/target-calls.js';
import type { InboundMessage, ProblemReporter, TargetCluster } from './pipeline/work-item.js';
import { Refusals } from './refusals.js';
import type { BackoffSettings } from '@offsetsync/runtime';
import { byGroup } from './translation-coalescer.js';

export type { InboundMessage, ProblemReporter, TargetCluster } from './pipeline/work-item.js';

/** What a commit pipeline needs. */
export interface CommitPipelineOptions {
  names: Names;
  /** Alias of the source cluster of the link. */
  source: string;
  /** Alias of the target cluster. */
  target: string;
  /** `observe`: decide and report, commit nothing (config `links[].mode`). Default: `commit`. */
  mode?: CommitterMode;
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
  applicationCommitTime?: ApplicationCommitTime;
  /**
   * Where the steps file their failures (unusable events, target calls, the applied-versions store) and
   * clear them when the area works again; see PipelineAreas. Default: nowhere.
   */
  problems?: ProblemReporter;
  /**
   * Runs per group between the decisions and the final read of the target before its commit; see
   * GroupApplyOptions.beforeCommit. Default: none.
   */
  beforeCommit?: (group: string) => Promise<void>;
  /** Keys whose last known KV record and revision are kept in memory (the CAS fast path). Default: `100000`. */
  versionCacheSize?: number;
  /**
   * The target partitions' log bounds, shared by the pipelines of one target. Default: a cache of this
   * pipeline's own over `cluster`.
   */
  logBounds?: LogBoundsCache;
  /**
   * Where refused events are logged (rate-limited per kind) and filed, shared by the pipelines of one
   * instance. Default: one of this pipeline's own over `logger` and `problems`.
   */
  refusals?: Refusals;
  clock?: () => number;
}

/**
 * Consumer groups handled at once within a batch. The Kafka adapter spreads them over its group
 * connections; more than those in flight keeps every connection busy while the others wait for NATS.
 */
const GROUP_CONCURRENCY = 64;

/** The commit pipeline of one link. */
export class CommitPipeline {
  private readonly clock: () => number;
  private readonly intake: Intake;
  private readonly logBounds: LogBoundsCheck;
  private readonly refusals: Refusals;
  private readonly groupApply: GroupApply;
  private readonly recommit: RecommitCheck;
  private readonly reports: Reports;
  /** Version of the most recent translation handled. */
  lastVersion: Version | undefined;
  /** When the last translation was handled (epoch ms); 0 before the first. */
  lastEventAtMs = 0;

  constructor(options: CommitPipelineOptions) {
    this.clock = options.clock ?? Date.now;
    const link = { source: options.source, target: options.target, mode: options.mode ?? 'commit' };
    const { names, logger, counters, problems } = options;
    const onHandled = (version: Version | undefined) => this.noteHandled(version);
    const target = new TargetCalls(options.cluster, problems, logger);
    const reservations = new Reservations({
      link,
      store: options.store,
      logger,
      clock: this.clock,
      versionCacheSize: options.versionCacheSize ?? 100_000,
      problems,
    });
    this.refusals = options.refusals ?? new Refusals({ logger, problems, clock: this.clock });
    this.intake = new Intake({
      names,
      link,
      tracer: options.tracer,
      logger,
      counters,
      problems,
      refusals: this.refusals,
      onHandled,
    });
    this.logBounds = new LogBoundsCheck({
      cache:
        options.logBounds ?? new LogBoundsCache((partitions) => options.cluster.partitionBounds(partitions)),
      refusals: this.refusals,
      logger,
      clock: this.clock,
      problems,
    });
    this.groupApply = new GroupApply({
      link,
      target,
      reservations,
      activeGroups: options.activeGroups,
      counters,
      logger,
      clock: this.clock,
      applicationCommitTime: options.applicationCommitTime,
      beforeCommit: options.beforeCommit,
    });
    this.recommit = new RecommitCheck({ link, target, reservations, logger });
    this.reports = new Reports({
      names,
      link,
      publish: options.publish,
      counters,
      backoff: options.backoff,
      onHandled,
    });
  }

  /**
   * Handles a batch and settles every message: acknowledged once its OffsetApplied event is stored (or at
   * once when there is nothing to report), handed back with a delay after a transient failure, terminated
   * when it cannot be read or is refused (another link or key than its subject's). A group's messages
   * are settled as soon as its events are stored. Rejects when some events could not be published; the
   * caller hands the unsettled messages back.
   */
  async handleBatch(messages: readonly InboundMessage[]): Promise<void> {
    this.refusals.sweep();
    const items = this.intake.accept(messages);
    try {
      // Before coalescing: an offset that is refused must not make an older, valid translation of its
      // key stale in the same batch.
      const inBounds = await this.logBounds.check(items);
      const decidedEarly = byGroup(items.filter((item) => item.fate !== undefined));
      const { newestByGroup, supersededByGroup } = coalesceBatch(inBounds, this.clock());
      const groups = [...new Set([...newestByGroup.keys(), ...decidedEarly.keys()])];
      let publishError: { error: unknown } | undefined;
      await mapWithConcurrency(groups, GROUP_CONCURRENCY, async (group) => {
        const groupItems = newestByGroup.get(group) ?? [];
        const applied = groupItems.length === 0 ? [] : await this.groupApply.apply(group, groupItems);
        // Refused as out of bounds, or handed back because the bounds could not be read.
        const early = decidedEarly.get(group) ?? [];
        const older = supersededByGroup.get(group) ?? [];
        try {
          // The check concerns newer versions than these events report; it need not hold them up.
          await Promise.all([
            applied.length === 0 ? undefined : this.recommit.run(group, applied),
            (async () => {
              // The applied stream keeps the last event per key: the refused and the superseded ones go
              // first, so the outcome of the newest translation that was tried is what stays.
              await this.reports.publish([...early, ...older]);
              await this.reports.publish(groupItems);
            })(),
          ]);
        } catch (error: unknown) {
          publishError ??= { error };
          return;
        }
        this.reports.settle([...early, ...older, ...groupItems]);
      });
      if (publishError !== undefined) throw publishError.error;
    } catch (error: unknown) {
      for (const item of items) {
        failSpan(item.span, error);
      }
      throw error;
    } finally {
      for (const item of items) item.span.end();
    }
  }

  private noteHandled(version: Version | undefined): void {
    if (version !== undefined) this.lastVersion = version;
    this.lastEventAtMs = this.clock();
  }
}
