// What the collector does with one batch of offsets-topic records: decode, filter, coalesce, resolve
// anchors (all commits of the batch together), build events and publish them, returning only once
// JetStream acknowledged every event. The caller commits the batch's position after that, so a crash
// re-emits (deduplicated by message id) and never loses a commit.
import { context, SpanKind, trace, type Tracer } from '@opentelemetry/api';
import { AnchorStatus, ErrorCodes, isOffsetSyncError, type Names } from '@offsetsync/contracts';
import { type StreamMessage } from '@offsetsync/jetstream';
import { type Logger } from '@offsetsync/runtime';
import type { AnchorResolver } from './anchor-resolver.js';
import { coalesce, type VersionedRecord } from './commit-coalescer.js';
import type { CommitFilter, FilterVerdict } from './commit-filter.js';
import { committedEvent, deletedEvent, toStreamMessage, type OutgoingEvent } from './offset-events.js';
import { decodeOffsetsTopicRecord } from './offsets-topic-decoder.js';
import type { CollectorOutcome, OutcomeCounters } from './outcome-counters.js';

/** A record as it comes off the offsets topic. */
export interface RawOffsetsRecord {
  offset: number;
  key: Buffer | null;
  value: Buffer | null;
}

export interface CollectorPipelineOptions {
  names: Names;
  /** Alias of the source cluster. */
  source: string;
  filter: CommitFilter;
  resolver: AnchorResolver;
  publish: (messages: StreamMessage[]) => Promise<unknown>;
  counters: OutcomeCounters;
  logger: Logger;
  tracer: Tracer;
  clock?: () => number;
}

const FILTER_OUTCOMES: Record<Exclude<FilterVerdict, 'pass'>, CollectorOutcome> = {
  'own-group': 'filtered_own_group',
  'group-filtered': 'filtered_group',
  'topic-filtered': 'filtered_topic',
  'offsetsync-commit': 'filtered_offsetsync_commit',
};

export class CollectorPipeline {
  private readonly clock: () => number;
  private readonly reportedUnknown = new Set<string>();
  /** The newest offsets-topic position whose events JetStream acknowledged, per offsets partition. */
  readonly lastVersion = new Map<number, number>();
  lastEventAtMs = 0;

  constructor(private readonly options: CollectorPipelineOptions) {
    this.clock = options.clock ?? Date.now;
  }

  /** Handles one batch of one offsets-topic partition. Rejects (retryably) when publishing fails. */
  async handleBatch(offsetsPartition: number, records: readonly RawOffsetsRecord[]): Promise<void> {
    const observedAtMs = this.clock();
    const passed = this.classify(offsetsPartition, records);
    const { kept, superseded } = coalesce(passed);
    this.options.counters.add('superseded', superseded);
    if (kept.length === 0) return;

    const commits = kept.flatMap((item) =>
      item.record.kind === 'offset-commit' ? [{ item, record: item.record }] : [],
    );
    const resolutions = await this.options.resolver.resolve(commits.map(({ record }) => record));
    const resolutionOf = new Map(commits.map(({ item }, i) => [item, resolutions[i]]));

    const events: OutgoingEvent[] = kept.map((item) => {
      if (item.record.kind !== 'offset-commit') {
        return deletedEvent(this.options.names, this.options.source, item.record, item.version, observedAtMs);
      }
      const resolution = resolutionOf.get(item);
      if (resolution === undefined) throw new Error('a commit lost its anchor resolution');
      if (resolution.status === AnchorStatus.ANCHOR_STATUS_BEYOND_LOG_END) {
        this.options.logger.warn(
          {
            group: item.record.group,
            topic: item.record.topic,
            partition: item.record.partition,
            detail: resolution.detail,
          },
          'invalid commit: offset past the log end; published as invalid, it will not be translated',
        );
        this.options.counters.add('invalid_commit');
      }
      return committedEvent(
        this.options.names,
        this.options.source,
        item.record,
        item.version,
        resolution,
        observedAtMs,
      );
    });
    await this.publish(events);
    for (const item of kept) {
      this.options.counters.add(item.record.kind === 'offset-commit' ? 'committed' : 'deleted');
    }
    const last = records[records.length - 1];
    if (last !== undefined) this.lastVersion.set(offsetsPartition, last.offset);
    this.lastEventAtMs = this.clock();
  }

  private classify(offsetsPartition: number, records: readonly RawOffsetsRecord[]): VersionedRecord[] {
    const passed: VersionedRecord[] = [];
    for (const raw of records) {
      let record;
      try {
        record = decodeOffsetsTopicRecord(raw.key, raw.value);
      } catch (error: unknown) {
        this.countUndecodable(offsetsPartition, raw.offset, error);
        continue;
      }
      const version = { offsetsPartition, offsetsOffset: raw.offset };
      switch (record.kind) {
        case 'group-metadata':
          this.options.counters.add('group_metadata');
          break;
        case 'coordinator-record':
          this.options.counters.add('coordinator_record');
          break;
        case 'group-deleted': {
          const verdict = this.options.filter.group(record.group);
          if (verdict === 'pass') passed.push({ record, version });
          else this.options.counters.add(FILTER_OUTCOMES[verdict]);
          break;
        }
        case 'offset-commit':
        case 'offset-deleted': {
          const metadata = record.kind === 'offset-commit' ? record.metadata : undefined;
          const verdict = this.options.filter.commit(record.group, record.topic, metadata);
          if (verdict === 'pass') passed.push({ record, version });
          else this.options.counters.add(FILTER_OUTCOMES[verdict]);
          break;
        }
      }
    }
    return passed;
  }

  /** Skips and counts a record that cannot be decoded; logs each kind of problem once. */
  private countUndecodable(offsetsPartition: number, offset: number, error: unknown): void {
    const unknown = isOffsetSyncError(error) && error.code === ErrorCodes.UNKNOWN_RECORD;
    const details = isOffsetSyncError(error) ? error.details : undefined;
    const keyType = typeof details?.keyType === 'number' ? details.keyType : undefined;
    const valueVersion = typeof details?.valueVersion === 'number' ? details.valueVersion : undefined;
    if (unknown) this.options.counters.addUnknown(keyType, valueVersion);
    else this.options.counters.add('decode_error');
    const kind = `${unknown ? 'unknown' : 'malformed'}:${String(keyType)}:${String(valueVersion)}`;
    if (this.reportedUnknown.has(kind)) return;
    this.reportedUnknown.add(kind);
    this.options.logger.warn(
      { err: error, offsetsPartition, offset, keyType, valueVersion },
      unknown
        ? 'skipping offsets-topic records of an unknown type or version (logged once per type and version; counted)'
        : 'skipping a malformed offsets-topic record (logged once per kind; counted)',
    );
  }

  /** One span per event, the root of that offset's trace; its context travels in the NATS headers. */
  private async publish(events: OutgoingEvent[]): Promise<void> {
    const spans = events.map((event) =>
      this.options.tracer.startSpan(
        'offsetsync.collect',
        {
          kind: SpanKind.PRODUCER,
          attributes: {
            'offsetsync.source': this.options.source,
            'offsetsync.group': event.group,
            'offsetsync.topic': event.topic,
            'offsetsync.partition': event.partition,
            'offsetsync.event': event.event.type,
            'messaging.message.id': event.msgId,
          },
        },
        context.active(),
      ),
    );
    const messages = events.map((event, i) =>
      toStreamMessage(event, trace.setSpan(context.active(), spans[i]!)),
    );
    try {
      await this.options.publish(messages);
    } catch (error: unknown) {
      for (const span of spans) span.recordException(error instanceof Error ? error : String(error));
      throw error;
    } finally {
      for (const span of spans) span.end();
    }
  }
}
